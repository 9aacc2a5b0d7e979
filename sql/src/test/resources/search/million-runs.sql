-- 1,000,000 runs of 20 workflows, started one a second back from 2026-12-01, each with the search
-- attributes customer (text, one of 5,000), amount (number) and tags (a keyword list of one or
-- two); every 50th run failed, every 500th still running, the rest completed. Used to check the
-- plans of queries over runs and to time them (docs/benchmarks.md). The two tables' secondary
-- indexes are dropped for the load and made again from their own definitions after it, which is
-- quicker than keeping them up row by row; the schema is the same afterwards.
SELECT * FROM queue.search_attribute_define('customer', 'text');
SELECT * FROM queue.search_attribute_define('amount', 'number');
SELECT * FROM queue.search_attribute_define('tags', 'keyword_list');

CREATE TEMP TABLE saved_index AS
SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
  FROM pg_index i
 WHERE i.indrelid IN ('queue.workflow_run'::regclass, 'queue.run_attribute'::regclass)
   AND NOT i.indisprimary AND NOT i.indisunique;
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT * FROM saved_index LOOP
        EXECUTE 'DROP INDEX ' || r.name;
    END LOOP;
END $$;

INSERT INTO queue.workflow_run (run_id, workflow_name, workflow_version, status, input, output, error,
                                retention_days, started_at, completed_at)
OVERRIDING SYSTEM VALUE
SELECT g, 'wf' || (g % 20), 1,
       CASE WHEN g % 500 = 0 THEN 'running' WHEN g % 50 = 0 THEN 'failed' ELSE 'completed' END::queue.workflow_status,
       jsonb_build_object('n', g),
       CASE WHEN g % 50 <> 0 THEN '1'::jsonb END,
       CASE WHEN g % 50 = 0 AND g % 500 <> 0 THEN '{"type": "Boom"}'::jsonb END,
       30,
       timestamptz '2026-12-01 00:00Z' - make_interval(secs => 1000000 - g),
       CASE WHEN g % 500 <> 0 THEN timestamptz '2026-12-01 00:00Z' - make_interval(secs => 1000000 - g) + interval '2 s' END
  FROM generate_series(1, 1000000) g;
SELECT setval(pg_get_serial_sequence('queue.workflow_run', 'run_id'), 1000000);

INSERT INTO queue.run_attribute (run_id, name, ord, v_text, v_num)
SELECT g, 'customer', 0, 'customer-' || (g % 5000), NULL FROM generate_series(1, 1000000) g
UNION ALL
SELECT g, 'amount', 0, NULL, (g % 1000) FROM generate_series(1, 1000000) g
UNION ALL
SELECT g, 'tags', 0, CASE WHEN g % 3 = 0 THEN 'eu' ELSE 'us' END, NULL FROM generate_series(1, 1000000) g
UNION ALL
SELECT g, 'tags', 1, 'rush', NULL FROM generate_series(1, 1000000) g WHERE g % 7 = 0;

DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT * FROM saved_index LOOP
        EXECUTE r.def;
    END LOOP;
END $$;
DROP TABLE saved_index;

ANALYZE queue.workflow_run;
ANALYZE queue.run_attribute;
