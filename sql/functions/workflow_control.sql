-- Acting on a run from outside: signals and cancellation (with the children it cancels).

-- Sends a caller's signal to a run (see workflow_deliver): delivered now when it fits the run's
-- wait, otherwise buffered for a later wait. Event names starting with "__" are the engine's own.
-- A run that continued as new passes the signal to its chain's running run. A signal that one of
-- the workflow's cancel-on rules names and matches cancels the run (outcome cancelled).
CREATE OR REPLACE FUNCTION queue.workflow_signal(p_run_id bigint, p_event text, p_payload jsonb, p_key text DEFAULT NULL::text)
 RETURNS TABLE(outcome text, signal_id bigint, workflow_name text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    d      record;
    v_run  bigint := p_run_id;
    v_last bigint;
BEGIN
    IF p_event IS NULL OR p_event = '' OR length(p_event) > 128 THEN
        RAISE EXCEPTION 'event name must be 1 to 128 characters' USING ERRCODE = '22023';
    END IF;
    IF p_event LIKE '\_\_%' THEN
        RAISE EXCEPTION 'event names starting with "__" are reserved for the engine' USING ERRCODE = '22023';
    END IF;
    IF p_key IS NOT NULL AND (p_key = '' OR length(p_key) > 255) THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 255 characters' USING ERRCODE = '22023';
    END IF;
    -- A run that ended by continuing as new passes the signal on to its chain's last run (a key
    -- the run had already seen still answers duplicate); tried again when that run continued
    -- meanwhile.
    LOOP
        SELECT * INTO d FROM queue.workflow_deliver(v_run, p_event, p_payload, p_key);
        EXIT WHEN d.outcome <> 'not running';
        SELECT l.run_id INTO v_last FROM queue.workflow_chain_last(v_run) l;
        EXIT WHEN v_last IS NULL OR v_last = v_run;
        v_run := v_last;
    END LOOP;
    -- A signal that one of the workflow's cancel-on rules names cancels the run it went to.
    IF d.outcome IN ('delivered', 'buffered')
       AND queue.workflow_cancelled_by_signal(v_run, p_event, p_payload) THEN
        PERFORM * FROM queue.workflow_cancel(v_run);
        RETURN QUERY SELECT 'cancelled'::text, d.signal_id, d.workflow_name;
        RETURN;
    END IF;
    RETURN QUERY SELECT d.outcome, d.signal_id, d.workflow_name;
END $$;

-- Cancels a running run and, first, its running children started with on_parent_cancel 'cancel':
-- drops each one's message and marks it cancelled; a worker finds out on its next write. A run that
-- continued as new passes the cancel to its chain's last run.
CREATE OR REPLACE FUNCTION queue.workflow_cancel(p_run_id bigint)
 RETURNS TABLE(cancelled boolean, status queue.workflow_status, workflow_name text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r queue.workflow_run;
    c bigint;
BEGIN
    -- Children first: a child's end locks its parent, so children are locked before their parent
    -- here too. Each child cancelled tells the parent, which is cancelled next.
    FOR c IN SELECT k.run_id FROM queue.workflow_run k
              WHERE k.parent_run_id = p_run_id AND k.status = 'running' AND k.on_parent_cancel = 'cancel'
              ORDER BY k.run_id LOOP
        PERFORM * FROM queue.workflow_cancel(c);
    END LOOP;
    r := queue.workflow_lock(p_run_id);
    -- A child started while the first pass ran held the parent until it committed: cancel it too.
    FOR c IN SELECT k.run_id FROM queue.workflow_run k
              WHERE k.parent_run_id = p_run_id AND k.status = 'running' AND k.on_parent_cancel = 'cancel'
              ORDER BY k.run_id LOOP
        PERFORM * FROM queue.workflow_cancel(c);
        r := queue.workflow_lock(p_run_id);
    END LOOP;
    IF r.status <> 'running' AND r.continued_to IS NOT NULL THEN
        -- Continued as new: the cancel is for the chain, whose last run is the one running.
        SELECT l.run_id INTO c FROM queue.workflow_chain_last(p_run_id) l;
        IF c IS NOT NULL AND c <> p_run_id THEN
            RETURN QUERY SELECT * FROM queue.workflow_cancel(c);
            RETURN;
        END IF;
    END IF;
    IF r.status <> 'running' THEN
        RETURN QUERY SELECT false, r.status, r.workflow_name;
        RETURN;
    END IF;
    IF r.current_msg_id IS NOT NULL THEN
        PERFORM queue.delete('__wf_' || r.workflow_name, r.current_msg_id);
    END IF;
    UPDATE queue.workflow_run wr
       SET status = 'cancelled', completed_at = clock_timestamp(), current_msg_id = NULL,
           wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL,
           wait_arms = NULL, wait_all = NULL, wait_fired = NULL
     WHERE wr.run_id = p_run_id;
    RETURN QUERY SELECT true, 'cancelled'::queue.workflow_status, r.workflow_name;
END $$;
