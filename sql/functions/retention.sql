-- Retention: the sweeper deletes in bounded batches, oldest first.

-- Deletes up to p_limit ended runs whose retention has passed, with their journals and signals; a
-- child run goes only after its parent. A run's streams and their entries go with its row (their
-- foreign keys cascade). A chain of runs that continued as new goes as a whole, when
-- its last run's retention has passed (each chain counts once towards p_limit); until then every
-- run of it is kept.
CREATE OR REPLACE FUNCTION queue.sweep_workflow_runs(p_limit integer DEFAULT 1000, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
AS $$
DECLARE
    v_count int;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 100000);
    WITH due AS (
        SELECT r.run_id, r.chain_first FROM queue.workflow_run r
         WHERE r.status <> 'running'
           -- A run another continues goes with its chain's last run.
           AND r.continued_to IS NULL
           AND r.completed_at + make_interval(days => r.retention_days) < coalesce(p_now, clock_timestamp())
           -- A child outlives its parent's row.
           AND (r.parent_run_id IS NULL
                OR NOT EXISTS (SELECT 1 FROM queue.workflow_run p WHERE p.run_id = r.parent_run_id))
         ORDER BY r.completed_at
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED),
         gone AS (
        DELETE FROM queue.workflow_run w
         WHERE w.run_id IN (SELECT due.run_id FROM due)
            OR w.chain_first IN (SELECT due.chain_first FROM due WHERE due.chain_first IS NOT NULL)
        RETURNING w.run_id),
         journal AS (
        DELETE FROM queue.workflow_step s WHERE s.run_id IN (SELECT gone.run_id FROM gone)),
         inbox AS (
        DELETE FROM queue.workflow_signal s WHERE s.run_id IN (SELECT gone.run_id FROM gone))
    SELECT count(*) INTO v_count FROM gone;
    RETURN v_count;
END $$;

-- Deletes up to p_limit dead letters that died before p_before.
CREATE OR REPLACE FUNCTION queue.sweep_dead_letters(p_before timestamp with time zone, p_limit integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
AS $$
DECLARE
    v_count int;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 100000);
    DELETE FROM queue.dead_letter
     WHERE dead_id IN (
           SELECT d.dead_id FROM queue.dead_letter d
            WHERE d.dead_at < p_before
            ORDER BY d.dead_at
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END $$;

-- Deletes up to p_limit finished webhook deliveries that ended before p_before.
CREATE OR REPLACE FUNCTION queue.sweep_outbox(p_before timestamp with time zone, p_limit integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
AS $$
DECLARE
    v_count int;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 100000);
    DELETE FROM queue.outbox
     WHERE delivery_id IN (
           SELECT o.delivery_id FROM queue.outbox o
            WHERE o.status <> 'pending' AND o.finished_at < p_before
            ORDER BY o.finished_at
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END $$;
