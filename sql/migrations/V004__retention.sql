-- Retention: finished workflow runs go after their own retention_days,
-- delivered or dead outbox rows and old dead letters after the operator's
-- windows. Each function deletes one bounded batch; the sweeper loops until
-- a batch comes back short. SKIP LOCKED keeps two sweepers (two servers)
-- from queueing behind each other. Running runs are never touched.

-- Deletes up to p_limit terminal runs whose retention has passed; journal rows cascade.
CREATE FUNCTION queue.sweep_workflow_runs(p_limit int DEFAULT 1000, p_now timestamptz DEFAULT NULL)
RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_count int;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 100000);
    DELETE FROM queue.workflow_run
     WHERE run_id IN (
           SELECT r.run_id FROM queue.workflow_run r
            WHERE r.status <> 'running'
              AND r.completed_at + make_interval(days => r.retention_days) < coalesce(p_now, clock_timestamp())
            ORDER BY r.completed_at
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END $$;

-- Deletes up to p_limit delivered or dead outbox rows finished before p_before.
CREATE FUNCTION queue.sweep_outbox(p_before timestamptz, p_limit int DEFAULT 1000)
RETURNS int
LANGUAGE plpgsql AS $$
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

-- Deletes up to p_limit dead letters that died before p_before.
CREATE FUNCTION queue.sweep_dead_letters(p_before timestamptz, p_limit int DEFAULT 1000)
RETURNS int
LANGUAGE plpgsql AS $$
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
