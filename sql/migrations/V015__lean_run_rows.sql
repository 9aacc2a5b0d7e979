-- Two costs every run paid for little.
--
-- The idempotency key's unique constraint indexed every run, keyed or not (a
-- btree holds NULLs): one entry when a run starts and another for every new
-- version of its row, and a run's end is never a HOT update. It becomes a
-- unique index over keyed runs only, and workflow_start's ON CONFLICT names
-- the index's predicate (without it the partial index is not inferred).
--
-- The journal's foreign key to its run checked every journal insert with a
-- FOR KEY SHARE lock on the run's row: a heap write and a WAL record per step.
-- Every writer of the journal has already established that its run is
-- running (by its lease on the run's message, or by holding the run's row),
-- and runs are deleted only by the retention sweep, which only takes runs
-- that have ended; it now deletes their journal rows itself.

CREATE UNIQUE INDEX workflow_run_idempotency_idx ON queue.workflow_run (workflow_name, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
ALTER TABLE queue.workflow_run DROP CONSTRAINT workflow_run_workflow_name_idempotency_key_key;

-- workflow_start (V006) differs only in its conflict target: patched in
-- place rather than restated, keeping its settings (V010's enable_seqscan).
DO $$
DECLARE
    v_old text := pg_get_functiondef('queue.workflow_start(text, jsonb, int, text, int, int, text)'::regprocedure);
    v_new text := replace(v_old,
        'ON CONFLICT (workflow_name, idempotency_key) DO NOTHING',
        'ON CONFLICT (workflow_name, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING');
BEGIN
    IF v_new = v_old THEN
        RAISE EXCEPTION 'workflow_start has no conflict target to patch';
    END IF;
    EXECUTE v_new;
END $$;

ALTER TABLE queue.workflow_step DROP CONSTRAINT workflow_step_run_id_fkey;

-- Deletes up to p_limit terminal runs whose retention has passed, with their journals.
CREATE OR REPLACE FUNCTION queue.sweep_workflow_runs(p_limit int DEFAULT 1000, p_now timestamptz DEFAULT NULL)
RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_count int;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 100000);
    WITH gone AS (
        DELETE FROM queue.workflow_run
         WHERE run_id IN (
               SELECT r.run_id FROM queue.workflow_run r
                WHERE r.status <> 'running'
                  AND r.completed_at + make_interval(days => r.retention_days) < coalesce(p_now, clock_timestamp())
                ORDER BY r.completed_at
                LIMIT p_limit
                FOR UPDATE SKIP LOCKED)
        RETURNING run_id),
         journal AS (
        DELETE FROM queue.workflow_step s WHERE s.run_id IN (SELECT gone.run_id FROM gone))
    SELECT count(*) INTO v_count FROM gone;
    RETURN v_count;
END $$;
