-- Reading runs: journals, listings, summaries.

-- A run's journal as a JSON array in step order, from the row after p_after (its seq) on when
-- given; a row with state changes carries them (state).
DROP FUNCTION IF EXISTS queue.workflow_journal(bigint);
CREATE OR REPLACE FUNCTION queue.workflow_journal(p_run_id bigint, p_after integer DEFAULT NULL::integer)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT coalesce(jsonb_agg(CASE WHEN s.state IS NULL THEN jsonb_build_object(
               'name', s.step_name, 'kind', s.kind, 'output', s.output, 'error', s.error,
               'timedOut', s.timed_out, 'attempts', s.attempts,
               'startedAt', s.started_at, 'completedAt', s.completed_at)
             -- A row's state changes travel only when it has some: most rows have none.
             ELSE jsonb_build_object(
               'name', s.step_name, 'kind', s.kind, 'output', s.output, 'error', s.error,
               'timedOut', s.timed_out, 'attempts', s.attempts,
               'startedAt', s.started_at, 'completedAt', s.completed_at, 'state', s.state) END
             ORDER BY s.seq), '[]'::jsonb)
      FROM queue.workflow_step s WHERE s.run_id = p_run_id AND s.seq > coalesce(p_after, 0);
$$;

-- A run's journal, or null when it has more rows than p_max (null: never withheld).
CREATE OR REPLACE FUNCTION queue.workflow_journal_unless_longer(p_run_id bigint, p_max integer)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
    SELECT CASE WHEN p_max IS NOT NULL
                 AND EXISTS (SELECT 1 FROM queue.workflow_step s
                              WHERE s.run_id = p_run_id AND s.seq > p_max)
                THEN NULL
                ELSE queue.workflow_journal(p_run_id) END;
$$;

-- The rows of a run's journal a worker lacks, which holds it up to the row p_seq written at
-- p_completed_at: the rows after it, or the whole journal (whole) when that row is no longer there
-- as it was (the run was restarted from an earlier step) or p_seq is null. With the seq and
-- completion time of the journal's last row, for the next call.
CREATE OR REPLACE FUNCTION queue.workflow_journal_after(p_run_id bigint, p_seq integer, p_completed_at timestamp with time zone)
 RETURNS TABLE(whole boolean, journal jsonb, last_seq integer, last_completed_at timestamp with time zone)
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $$
    WITH held AS (
        SELECT p_seq IS NOT NULL AND EXISTS (
                   SELECT 1 FROM queue.workflow_step s
                    WHERE s.run_id = p_run_id AND s.seq = p_seq
                      AND s.completed_at = p_completed_at) AS ok)
    SELECT NOT held.ok,
           queue.workflow_journal(p_run_id, CASE WHEN held.ok THEN p_seq END),
           l.seq,
           l.completed_at
      FROM held
      LEFT JOIN LATERAL (SELECT s.seq, s.completed_at FROM queue.workflow_step s
                          WHERE s.run_id = p_run_id ORDER BY s.seq DESC LIMIT 1) l ON true;
$$;

-- Runs of a workflow, newest first, after a run-id cursor, filtered by status, start time, input
-- containment and parent run.
CREATE OR REPLACE FUNCTION queue.workflow_list(p_name text, p_status queue.workflow_status DEFAULT NULL::queue.workflow_status, p_since timestamp with time zone DEFAULT NULL::timestamp with time zone, p_until timestamp with time zone DEFAULT NULL::timestamp with time zone, p_input jsonb DEFAULT NULL::jsonb, p_before bigint DEFAULT NULL::bigint, p_limit integer DEFAULT 50, p_parent bigint DEFAULT NULL::bigint)
 RETURNS SETOF queue.workflow_run
 LANGUAGE plpgsql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    RETURN QUERY
        SELECT * FROM queue.workflow_run r
         WHERE r.workflow_name = p_name
           AND (p_status IS NULL OR r.status = p_status)
           AND (p_since IS NULL OR r.started_at >= p_since)
           AND (p_until IS NULL OR r.started_at < p_until)
           AND (p_input IS NULL OR r.input @> p_input)
           AND (p_before IS NULL OR r.run_id < p_before)
           AND (p_parent IS NULL OR r.parent_run_id = p_parent)
         ORDER BY r.run_id DESC
         LIMIT p_limit;
END $$;

-- Every workflow (every __wf_ queue) with its running runs, 0 when none runs: the runs-in-flight
-- gauge, refreshed every second a server is scraped. Counts index entries of running runs only, never
-- the finished runs retention keeps, as workflow_summary does.
CREATE OR REPLACE FUNCTION queue.workflow_running()
 RETURNS TABLE(workflow_name text, running bigint)
 LANGUAGE sql
 STABLE
AS $$
    SELECT w.name,
           (SELECT count(*) FROM queue.workflow_run r
             WHERE r.workflow_name = w.name AND r.status = 'running')
      FROM (SELECT substr(q.queue_name, 6) AS name
              FROM queue.queue_meta q
             WHERE starts_with(q.queue_name, '__wf_')) w
     ORDER BY w.name;
$$;

-- Every workflow with its run counts per status and whether it is paused (a paused workflow
-- without runs too). (timed_out is compared as text: this body is checked in the transaction that
-- may have just added that value.)
DROP FUNCTION IF EXISTS queue.workflow_summary();
CREATE OR REPLACE FUNCTION queue.workflow_summary()
 RETURNS TABLE(workflow_name text, running bigint, completed bigint, failed bigint, cancelled bigint, timed_out bigint, paused boolean)
 LANGUAGE sql
 STABLE
AS $$
    SELECT s.* FROM (
        SELECT r.workflow_name,
               count(*) FILTER (WHERE r.status = 'running'),
               count(*) FILTER (WHERE r.status = 'completed'),
               count(*) FILTER (WHERE r.status = 'failed'),
               count(*) FILTER (WHERE r.status = 'cancelled'),
               count(*) FILTER (WHERE r.status::text = 'timed_out'),
               EXISTS (SELECT 1 FROM queue.workflow_pause p WHERE p.workflow_name = r.workflow_name)
          FROM queue.workflow_run r
         GROUP BY r.workflow_name
        UNION ALL
        SELECT p.workflow_name, 0, 0, 0, 0, 0, true
          FROM queue.workflow_pause p
         WHERE NOT EXISTS (SELECT 1 FROM queue.workflow_run r WHERE r.workflow_name = p.workflow_name)) s
     ORDER BY s.workflow_name;
$$;

-- A run of the named workflow: no row when the run is gone or another workflow's.
CREATE OR REPLACE FUNCTION queue.workflow_get(p_name text, p_run_id bigint)
 RETURNS SETOF queue.workflow_run
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT * FROM queue.workflow_run r WHERE r.run_id = p_run_id AND r.workflow_name = p_name;
$$;

-- The workflow a run belongs to; null when the run is gone (a child's parent deleted by retention).
CREATE OR REPLACE FUNCTION queue.workflow_name_of(p_run_id bigint)
 RETURNS text
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT r.workflow_name FROM queue.workflow_run r WHERE r.run_id = p_run_id;
$$;

-- When a running run's first task is due; null when it was due at once, has ended or is gone.
CREATE OR REPLACE FUNCTION queue.workflow_due_at(p_run_id bigint)
 RETURNS timestamp with time zone
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT r.due_at FROM queue.workflow_run r WHERE r.run_id = p_run_id AND r.status = 'running';
$$;

-- The schema version this database is at (its last migration), for callers that may read no table.
CREATE OR REPLACE FUNCTION queue.schema_version_installed()
 RETURNS integer
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT coalesce(max(v.version), 0) FROM queue.schema_version v;
$$;
