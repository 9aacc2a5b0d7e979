-- Updates: a request into a run that one of its workflow's update handlers answers. A caller sends
-- one (workflow_update_send); a worker takes the run's pending updates (workflow_update_take) in a
-- task of reason "update" and answers them (workflow_update_answer): a handled update is journaled
-- as the run's row __update.<id>, with its input, its answer and its change of the run's state, so
-- replay passes it where it happened; a refused one (its validator said no) leaves no row.
--
-- An update task is a message of the run's group. One behind a task a worker holds waits for it,
-- so a handler never runs beside the run's body; one behind a message that only waits for its
-- time (a sleep's end, a wait's timeout, a start not taken yet) goes ahead of it, which keeps its
-- time and is the group's head again once the updates are answered.

-- An update's status as callers see it: a pending update of a run that has ended is dropped.
CREATE OR REPLACE FUNCTION queue.workflow_update_status(p_status text, p_run_status queue.workflow_status)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT CASE WHEN p_status = 'pending' AND p_run_status <> 'running' THEN 'dropped' ELSE p_status END;
$$;

-- Raises 22023 unless the text is an update's name: a step name.
CREATE OR REPLACE FUNCTION queue.check_update_name(p_name text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF NOT queue.is_step_name(p_name) THEN
        RAISE EXCEPTION 'update name "%" must be 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-"',
            left(coalesce(p_name, ''), 140) USING ERRCODE = '22023';
    END IF;
END $$;

-- Makes sure run p_run_id (locked) has an update task not taken yet, and lets it go ahead of an
-- idle head of the run's group.
CREATE OR REPLACE FUNCTION queue.workflow_update_wake(p_queue text, p_run_id bigint, p_version integer)
 RETURNS void
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $$
DECLARE
    v_group text := p_run_id::text;
    v_next  bigint;
    v_head  bigint;
    v_idle  boolean;
    v_moved bigint;
BEGIN
    PERFORM queue.lock_group(p_queue, v_group);
    EXECUTE format('SELECT msg_id FROM queue.%I WHERE group_id = $1 AND read_ct = 0'
                   ' AND body ->> ''reason'' = ''update'' ORDER BY msg_id LIMIT 1', 'q_' || p_queue)
        USING v_group INTO v_next;
    IF v_next IS NULL THEN
        v_next := queue.enqueue(p_queue, jsonb_build_object('v', p_version, 'reason', 'update'), NULL, 0,
                                v_group);
    END IF;
    EXECUTE format('SELECT msg_id, read_ct = 0 FROM queue.%I WHERE group_id = $1 AND head', 'q_' || p_queue)
        USING v_group INTO v_head, v_idle;
    IF v_head IS NULL OR v_head = v_next OR NOT v_idle THEN
        RETURN;
    END IF;
    -- Rechecked under the row's lock: a poll that took the head meanwhile keeps it.
    EXECUTE format('UPDATE queue.%I SET head = false WHERE msg_id = $1 AND head AND read_ct = 0'
                   ' RETURNING msg_id', 'q_' || p_queue)
        USING v_head INTO v_moved;
    IF v_moved IS NULL THEN
        RETURN;
    END IF;
    EXECUTE format('UPDATE queue.%I SET head = true WHERE msg_id = $1', 'q_' || p_queue) USING v_next;
    PERFORM queue.notify_once(p_queue);
END $$;

-- Sends update p_name with p_input to run p_run_id: kept pending until a worker answers it. A
-- repeated idempotency key sends nothing and answers the first update with that key, as it stands.
-- 22023 for a bad name or key; P0002 for a run that does not exist; WF003 for one not running.
CREATE OR REPLACE FUNCTION queue.workflow_update_send(p_run_id bigint, p_name text, p_input jsonb, p_key text DEFAULT NULL::text)
 RETURNS TABLE(update_id bigint, status text, output jsonb, error jsonb, created boolean, workflow_name text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r queue.workflow_run;
    u queue.workflow_update;
BEGIN
    PERFORM queue.check_update_name(p_name);
    IF p_key IS NOT NULL AND (p_key = '' OR length(p_key) > 255) THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 255 characters' USING ERRCODE = '22023';
    END IF;
    r := queue.workflow_lock(p_run_id);
    IF p_key IS NOT NULL THEN
        SELECT * INTO u FROM queue.workflow_update x WHERE x.run_id = p_run_id AND x.idempotency_key = p_key;
        IF FOUND THEN
            RETURN QUERY SELECT u.update_id, queue.workflow_update_status(u.status, r.status), u.output, u.error,
                                false, r.workflow_name;
            RETURN;
        END IF;
    END IF;
    IF r.status <> 'running' THEN
        RAISE EXCEPTION 'run % is %: it takes no update', p_run_id, r.status USING ERRCODE = 'WF003';
    END IF;
    INSERT INTO queue.workflow_update (run_id, name, input, idempotency_key)
    VALUES (p_run_id, p_name, coalesce(p_input, 'null'::jsonb), p_key)
    RETURNING * INTO u;
    PERFORM queue.workflow_update_wake('__wf_' || r.workflow_name, p_run_id, r.workflow_version);
    RETURN QUERY SELECT u.update_id, u.status, NULL::jsonb, NULL::jsonb, true, r.workflow_name;
END $$;

-- The pending updates (oldest first, at most 100) of the run whose update task p_msg_id the
-- receipt holds, with the run's state: {"updates": [{"updateId", "update", "input"}], "state":
-- {...}}. Null when the receipt no longer holds the task.
CREATE OR REPLACE FUNCTION queue.workflow_update_take(p_run_id bigint, p_msg_id bigint, p_receipt bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r queue.workflow_run := queue.workflow_lock(p_run_id);
BEGIN
    IF NOT queue.workflow_holds_lease('__wf_' || r.workflow_name, p_msg_id, p_receipt) THEN
        RETURN NULL;
    END IF;
    RETURN jsonb_build_object(
        'updates', coalesce((SELECT jsonb_agg(jsonb_build_object('updateId', p.update_id, 'update', p.name,
                                                                 'input', p.input) ORDER BY p.update_id)
                               FROM (SELECT * FROM queue.workflow_update x
                                      WHERE x.run_id = p_run_id AND x.status = 'pending' AND r.status = 'running'
                                      ORDER BY x.update_id LIMIT 100) p), '[]'::jsonb),
        'state', coalesce((SELECT jsonb_object_agg(s.key, s.value) FROM queue.workflow_state(p_run_id) s),
                          '{}'::jsonb));
END $$;

-- Answers updates of the run whose update task p_msg_id the receipt holds, and ends the task. Each
-- answer is {"updateId", "status": completed|failed|refused, "output", "error", "state",
-- "signals": [{"event", "payload"}]}: a completed or failed update is journaled as row
-- __update.<id> with its state changes, and its signals go to the run's inbox; a refused one only
-- answers. An answer to an update answered already, or not the run's, changes nothing. Answers
-- {"outcome": ok, stale (the receipt no longer holds the task) or not_running, "answered":
-- [{"updateId", "update", "status"}]}; 22023 naming the field for a bad answer, and nothing is
-- written.
CREATE OR REPLACE FUNCTION queue.workflow_update_answer(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_answers jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r        queue.workflow_run := queue.workflow_lock(p_run_id);
    v_queue  text := '__wf_' || r.workflow_name;
    a        jsonb;
    e        jsonb;
    u        queue.workflow_update;
    v_status text;
    v_state  jsonb;
    v_done   jsonb := '[]'::jsonb;
BEGIN
    IF jsonb_typeof(p_answers) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'answers must be an array' USING ERRCODE = '22023';
    END IF;
    IF NOT queue.workflow_holds_lease(v_queue, p_msg_id, p_receipt) THEN
        RETURN jsonb_build_object('outcome', 'stale', 'answered', v_done);
    END IF;
    IF r.status <> 'running' THEN
        PERFORM queue.delete(v_queue, p_msg_id);
        RETURN jsonb_build_object('outcome', 'not_running', 'answered', v_done);
    END IF;
    FOR a IN SELECT * FROM jsonb_array_elements(p_answers) LOOP
        v_status := a ->> 'status';
        IF v_status IS NULL OR v_status NOT IN ('completed', 'failed', 'refused') THEN
            RAISE EXCEPTION 'answers[].status must be completed, failed or refused' USING ERRCODE = '22023';
        END IF;
        IF v_status <> 'completed' AND nullif(a -> 'error', 'null'::jsonb) IS NULL THEN
            RAISE EXCEPTION 'answers[].error is required for a % update', v_status USING ERRCODE = '22023';
        END IF;
        IF jsonb_typeof(a -> 'updateId') IS DISTINCT FROM 'number' THEN
            RAISE EXCEPTION 'answers[].updateId must be a number' USING ERRCODE = '22023';
        END IF;
        SELECT * INTO u FROM queue.workflow_update x
         WHERE x.update_id = (a ->> 'updateId')::bigint AND x.run_id = p_run_id AND x.status = 'pending'
           FOR UPDATE;
        CONTINUE WHEN NOT FOUND;
        IF v_status <> 'refused' THEN
            v_state := nullif(a -> 'state', 'null'::jsonb);
            PERFORM queue.check_step(p_run_id, '__update.' || u.update_id, 'run', v_state);
            PERFORM queue.workflow_journal_step(
                p_run_id, '__update.' || u.update_id, 'run',
                jsonb_build_object('update', u.name, 'input', u.input, 'output', a -> 'output'),
                CASE WHEN v_status = 'failed' THEN a -> 'error' END, 1, u.sent_at, NULL, v_state);
            FOR e IN SELECT * FROM jsonb_array_elements(coalesce(nullif(a -> 'signals', 'null'::jsonb), '[]'::jsonb)) LOOP
                IF coalesce(e ->> 'event', '') = '' OR length(e ->> 'event') > 128 OR starts_with(e ->> 'event', '__') THEN
                    RAISE EXCEPTION 'answers[].signals[].event must be 1 to 128 characters, not starting "__"'
                        USING ERRCODE = '22023';
                END IF;
                PERFORM * FROM queue.workflow_deliver(p_run_id, e ->> 'event', e -> 'payload');
            END LOOP;
        END IF;
        UPDATE queue.workflow_update x
           SET status = v_status,
               output = CASE WHEN v_status = 'completed' THEN coalesce(a -> 'output', 'null'::jsonb) END,
               error = CASE WHEN v_status <> 'completed' THEN a -> 'error' END,
               answered_at = clock_timestamp()
         WHERE x.update_id = u.update_id;
        v_done := v_done || jsonb_build_object('updateId', u.update_id, 'update', u.name, 'status', v_status);
    END LOOP;
    PERFORM queue.delete(v_queue, p_msg_id);
    IF EXISTS (SELECT 1 FROM queue.workflow_update x WHERE x.run_id = p_run_id AND x.status = 'pending') THEN
        PERFORM queue.workflow_update_wake(v_queue, p_run_id, r.workflow_version);
    END IF;
    RETURN jsonb_build_object('outcome', 'ok', 'answered', v_done);
END $$;

-- Updates by id, as they stand (an id that is not one is left out): for callers waiting for
-- answers.
CREATE OR REPLACE FUNCTION queue.workflow_update_results(p_update_ids bigint[])
 RETURNS TABLE(update_id bigint, run_id bigint, name text, status text, output jsonb, error jsonb, answered_at timestamp with time zone)
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT u.update_id, u.run_id, u.name, queue.workflow_update_status(u.status, r.status), u.output, u.error,
           u.answered_at
      FROM queue.workflow_update u JOIN queue.workflow_run r ON r.run_id = u.run_id
     WHERE u.update_id = ANY (p_update_ids)
     ORDER BY u.update_id;
$$;

-- A run's updates in the order they were sent, pending and answered.
CREATE OR REPLACE FUNCTION queue.workflow_updates(p_run_id bigint)
 RETURNS TABLE(update_id bigint, name text, input jsonb, idempotency_key text, status text, output jsonb, error jsonb, sent_at timestamp with time zone, answered_at timestamp with time zone)
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT u.update_id, u.name, u.input, u.idempotency_key, queue.workflow_update_status(u.status, r.status),
           u.output, u.error, u.sent_at, u.answered_at
      FROM queue.workflow_update u JOIN queue.workflow_run r ON r.run_id = u.run_id
     WHERE u.run_id = p_run_id
     ORDER BY u.update_id;
$$;

-- Update-with-start: starts a run of p_name (the start's arguments as workflow_start's) or finds
-- the one its idempotency key names, and sends it update p_update, in one transaction: a run made
-- here exists with its update, or neither does. The key is required, as it names the run a repeat
-- finds. Answers the run (run_id, and whether this call made it) and the update as
-- workflow_update_send does; WF003 when the run the key names has ended (nothing changes).
CREATE OR REPLACE FUNCTION queue.workflow_update_with_start(p_name text, p_input jsonb, p_version integer, p_idempotency_key text, p_retention_days integer, p_max_retention_days integer, p_trace_context text, p_timing jsonb, p_update text, p_update_input jsonb, p_update_key text DEFAULT NULL::text)
 RETURNS TABLE(run_id bigint, run_created boolean, update_id bigint, status text, output jsonb, error jsonb, created boolean)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    s record;
BEGIN
    IF p_idempotency_key IS NULL THEN
        RAISE EXCEPTION 'an update-with-start needs the start''s idempotencyKey: it names the run a repeat finds'
            USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_update_name(p_update);
    SELECT w.run_id, w.created INTO s
      FROM queue.workflow_start(p_name, p_input, p_version, p_idempotency_key, p_retention_days,
                                p_max_retention_days, p_trace_context, p_timing) w;
    RETURN QUERY SELECT s.run_id, s.created, u.update_id, u.status, u.output, u.error, u.created
                   FROM queue.workflow_update_send(s.run_id, p_update, p_update_input, p_update_key) u;
END $$;
