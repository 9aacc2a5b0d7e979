-- Retention: the sweeper deletes in bounded batches, oldest first.

-- Trigger function (trigger workflow_run_expiry, below): an ended run's expiry, when its retention
-- passes; the sweeper picks runs by it (workflow_run_expiry_idx).
CREATE OR REPLACE FUNCTION queue.workflow_run_expiry()
 RETURNS trigger
 LANGUAGE plpgsql
AS $$
BEGIN
    NEW.expires_at := NEW.completed_at + make_interval(days => NEW.retention_days);
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER workflow_run_expiry
    BEFORE INSERT OR UPDATE OF status, completed_at, retention_days ON queue.workflow_run
    FOR EACH ROW
    WHEN (NEW.status <> 'running')
    EXECUTE FUNCTION queue.workflow_run_expiry();

-- Deletes up to p_limit ended runs whose retention has passed, the first expired first, with their
-- journals and signals; a child run goes only after its parent. Runs that continued as new expire
-- one by one like any run, except a chain's first run: callers hold its id, so it stays while the
-- chain goes on and goes with the chain's last run once that one's retention has passed (the pair
-- counts two towards p_limit; a pair first in line goes even when p_limit is 1).
-- A run's streams and their entries go with its row (their foreign keys cascade).
CREATE OR REPLACE FUNCTION queue.sweep_workflow_runs(p_limit integer DEFAULT 1000, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_count int;
    -- A value, not clock_timestamp() in the query: a volatile call cannot bound an index scan.
    v_now   timestamptz := coalesce(p_now, clock_timestamp());
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 100000);
    WITH due AS (
        SELECT r.run_id, r.expires_at,
               -- A chain's last run takes the chain's first with it.
               CASE WHEN r.chain_first IS NOT NULL AND r.continued_to IS NULL THEN r.chain_first END AS anchor
          FROM queue.workflow_run r
         WHERE r.status <> 'running'
           -- A chain's first run is not picked on its own (see anchor).
           AND (r.chain_first IS NULL OR r.run_id <> r.chain_first)
           AND r.expires_at < v_now
           -- A child outlives its parent's row.
           AND (r.parent_run_id IS NULL
                OR NOT EXISTS (SELECT 1 FROM queue.workflow_run p WHERE p.run_id = r.parent_run_id))
         ORDER BY r.expires_at
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED),
         counted AS (
        SELECT due.run_id, due.anchor,
               sum(CASE WHEN due.anchor IS NULL THEN 1 ELSE 2 END)
                   OVER (ORDER BY due.expires_at, due.run_id) AS upto,
               row_number() OVER (ORDER BY due.expires_at, due.run_id) AS nth
          FROM due),
         picked AS (
        SELECT counted.run_id, counted.anchor FROM counted
         WHERE counted.upto <= p_limit OR counted.nth = 1),
         gone AS (
        -- One list, not two IN tests joined by OR: the planner answers an OR of subqueries with a
        -- scan of the whole table.
        DELETE FROM queue.workflow_run w
         WHERE w.run_id IN (SELECT picked.run_id FROM picked
                            UNION ALL
                            SELECT picked.anchor FROM picked WHERE picked.anchor IS NOT NULL)
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
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
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
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
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
