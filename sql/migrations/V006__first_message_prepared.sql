-- A start without an idempotency key writes its run once and its first
-- message with a statement prepared once per session, instead of inserting
-- the run, sending through queue.send (two statements planned on each call)
-- and updating the run again with the message id. The group of a run that
-- does not exist yet is empty and nobody else can send to it before this
-- transaction commits, so the first message is its head without the group
-- lock and look-up that queue.send makes. Starts with a key keep the old
-- order: the run row decides which of racing starts wins.
CREATE OR REPLACE FUNCTION queue.workflow_start(
    p_name text,
    p_input jsonb,
    p_version int DEFAULT NULL,
    p_idempotency_key text DEFAULT NULL,
    p_retention_days int DEFAULT NULL,
    p_max_retention_days int DEFAULT 365,
    p_trace_context text DEFAULT NULL
) RETURNS TABLE (run_id bigint, status queue.workflow_status, created boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_queue     text := '__wf_' || p_name;
    v_version   int := p_version;
    v_retention int;
    v_run       bigint;
    v_msg       bigint;
    v_now       timestamptz := clock_timestamp();
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    IF p_version IS NOT NULL THEN
        PERFORM queue.check_range('version', p_version, 1, 1000000);
    END IF;
    IF p_retention_days IS NOT NULL THEN
        PERFORM queue.check_range('retentionDays', p_retention_days, 1, 36500);
    END IF;
    IF p_idempotency_key IS NOT NULL AND (p_idempotency_key = '' OR length(p_idempotency_key) > 255) THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 255 characters' USING ERRCODE = '22023';
    END IF;
    v_retention := least(coalesce(p_retention_days, 30), p_max_retention_days);
    IF v_version IS NULL THEN
        SELECT coalesce(max(version), 1) INTO v_version
          FROM queue.workflow_version WHERE workflow_name = p_name;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM queue.queue_meta WHERE queue_name = v_queue) THEN
        PERFORM queue.create_queue(v_queue, true, 60, NULL);
    END IF;

    IF p_idempotency_key IS NOT NULL THEN
        INSERT INTO queue.workflow_run (workflow_name, workflow_version, input, idempotency_key, retention_days,
                                        trace_context)
        VALUES (p_name, v_version, p_input, p_idempotency_key, v_retention, p_trace_context)
        ON CONFLICT (workflow_name, idempotency_key) DO NOTHING
        RETURNING workflow_run.run_id INTO v_run;
        IF v_run IS NULL THEN
            RETURN QUERY SELECT r.run_id, r.status, false FROM queue.workflow_run r
                          WHERE r.workflow_name = p_name AND r.idempotency_key = p_idempotency_key;
            RETURN;
        END IF;
        v_msg := queue.send(v_queue, jsonb_build_object('v', v_version, 'reason', 'start'), NULL, 0, v_run::text);
        UPDATE queue.workflow_run r SET current_msg_id = v_msg WHERE r.run_id = v_run;
        RETURN QUERY SELECT v_run, 'running'::queue.workflow_status, true;
        RETURN;
    END IF;

    v_run := nextval(pg_get_serial_sequence('queue.workflow_run', 'run_id'));
    EXECUTE queue.prepared_sql('wf_first_' || p_name, 'q_' || v_queue, $q$
        INSERT INTO queue.%1$I (group_id, head, enqueued_at, vt, body)
        VALUES ($1, true, $2, $2, $3) RETURNING msg_id$q$,
        'text, timestamptz, jsonb',
        format('%L, %L, %L', v_run::text, v_now, jsonb_build_object('v', v_version, 'reason', 'start')))
        INTO v_msg;
    INSERT INTO queue.workflow_run (run_id, workflow_name, workflow_version, input, retention_days,
                                    trace_context, current_msg_id)
    OVERRIDING SYSTEM VALUE
    VALUES (v_run, p_name, v_version, p_input, v_retention, p_trace_context, v_msg);
    PERFORM queue.notify_once(v_queue);
    RETURN QUERY SELECT v_run, 'running'::queue.workflow_status, true;
END $$;
