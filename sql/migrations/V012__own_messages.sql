-- A retry or a lease extension must name the run's own message, as a
-- completion must since V011: another run's message holds no lease on it
-- ('stale' and a null receipt, nothing changes), and a retry for a run that
-- is no longer running acks the named message only when it is that run's.
-- Before, holding one run's task let a worker delay or ack another run's.
--
-- Both functions are replaced whole (from V003), and the index-plan setting
-- of V010 is set again at the end.

CREATE OR REPLACE FUNCTION queue.workflow_retry(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_delay_ms bigint)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r       queue.workflow_run := queue.workflow_lock(p_run_id);
    v_queue text := '__wf_' || r.workflow_name;
BEGIN
    PERFORM queue.check_range('delay (milliseconds)', p_delay_ms, 0, 31536000000);
    IF r.status <> 'running' THEN
        PERFORM queue.workflow_drop_message(v_queue, p_run_id, p_msg_id);
        RETURN 'not_running';
    END IF;
    IF r.current_msg_id IS DISTINCT FROM p_msg_id
       OR NOT queue.workflow_holds_lease(v_queue, p_msg_id, p_receipt) THEN
        RETURN 'stale';
    END IF;
    EXECUTE format('UPDATE queue.%I SET vt = clock_timestamp() + $2 WHERE msg_id = $1', 'q_' || v_queue)
        USING p_msg_id, make_interval(secs => p_delay_ms / 1000.0);
    RETURN 'ok';
END $$;

-- Extends the lease of a task whose step is still running; returns the new
-- receipt, or null when the lease was already lost.
CREATE OR REPLACE FUNCTION queue.workflow_extend_lease(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_lease int)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    r       queue.workflow_run := queue.workflow_lock(p_run_id);
    v_queue text := '__wf_' || r.workflow_name;
    v_vt    timestamptz;
BEGIN
    PERFORM queue.check_range('leaseSeconds', p_lease, 1, 43200);
    IF r.status <> 'running' OR r.current_msg_id IS DISTINCT FROM p_msg_id
       OR NOT queue.workflow_holds_lease(v_queue, p_msg_id, p_receipt) THEN
        RETURN NULL;
    END IF;
    v_vt := clock_timestamp() + make_interval(secs => p_lease);
    EXECUTE format('UPDATE queue.%I SET vt = $2 WHERE msg_id = $1', 'q_' || v_queue) USING p_msg_id, v_vt;
    RETURN queue.receipt_of(v_vt);
END $$;

ALTER FUNCTION queue.workflow_retry(bigint, bigint, bigint, bigint) SET enable_seqscan = off;
ALTER FUNCTION queue.workflow_extend_lease(bigint, bigint, bigint, int) SET enable_seqscan = off;
