-- Acting on a run from outside: signals and cancellation.

-- Delivers an event to a run waiting for it whose match the payload contains; otherwise says why
-- not.
CREATE OR REPLACE FUNCTION queue.workflow_signal(p_run_id bigint, p_event text, p_payload jsonb)
 RETURNS TABLE(delivered boolean, reason text, workflow_name text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    r       queue.workflow_run;
    v_queue text;
    v_msg   bigint;
BEGIN
    IF p_event IS NULL OR p_event = '' OR length(p_event) > 128 THEN
        RAISE EXCEPTION 'event name must be 1 to 128 characters' USING ERRCODE = '22023';
    END IF;
    SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = p_run_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT false, 'no such run'::text, NULL::text;
        RETURN;
    END IF;
    IF r.status <> 'running' THEN
        RETURN QUERY SELECT false, 'not running'::text, r.workflow_name;
        RETURN;
    END IF;
    IF r.wait_event IS DISTINCT FROM p_event THEN
        RETURN QUERY SELECT false, 'not waiting for that event'::text, r.workflow_name;
        RETURN;
    END IF;
    -- An empty match accepts any payload, scalars included.
    IF r.wait_match <> '{}'::jsonb AND NOT (coalesce(p_payload, 'null'::jsonb) @> r.wait_match) THEN
        RETURN QUERY SELECT false, 'payload does not match'::text, r.workflow_name;
        RETURN;
    END IF;
    v_queue := '__wf_' || r.workflow_name;
    INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, started_at)
    VALUES (r.run_id, r.wait_step,
            (SELECT coalesce(max(s.seq), 0) + 1 FROM queue.workflow_step s WHERE s.run_id = r.run_id),
            'wait', p_payload, r.wait_since)
    ON CONFLICT DO NOTHING;
    v_msg := queue.enqueue(v_queue, jsonb_build_object('v', r.workflow_version, 'reason', 'signal'), NULL, 0,
                           r.run_id::text);
    PERFORM queue.delete(v_queue, r.current_msg_id);
    UPDATE queue.workflow_run wr
       SET current_msg_id = v_msg, wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL
     WHERE wr.run_id = r.run_id;
    RETURN QUERY SELECT true, 'delivered'::text, r.workflow_name;
END $$;

-- Cancels a running run: drops its message and marks it cancelled; a worker finds out on its next
-- write.
CREATE OR REPLACE FUNCTION queue.workflow_cancel(p_run_id bigint)
 RETURNS TABLE(cancelled boolean, status queue.workflow_status, workflow_name text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    r queue.workflow_run := queue.workflow_lock(p_run_id);
BEGIN
    IF r.status <> 'running' THEN
        RETURN QUERY SELECT false, r.status, r.workflow_name;
        RETURN;
    END IF;
    IF r.current_msg_id IS NOT NULL THEN
        PERFORM queue.delete('__wf_' || r.workflow_name, r.current_msg_id);
    END IF;
    UPDATE queue.workflow_run wr
       SET status = 'cancelled', completed_at = clock_timestamp(), current_msg_id = NULL,
           wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL
     WHERE wr.run_id = p_run_id;
    RETURN QUERY SELECT true, 'cancelled'::queue.workflow_status, r.workflow_name;
END $$;
