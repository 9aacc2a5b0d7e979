-- Tasks and their leases: handing out due tasks, checking and extending a lease, retrying later,
-- dropping the messages of ended runs.

-- Locks a run's row FOR UPDATE and returns it; P0002 when the run does not exist.
CREATE OR REPLACE FUNCTION queue.workflow_lock(p_run_id bigint)
 RETURNS queue.workflow_run
 LANGUAGE plpgsql
AS $$
DECLARE
    r queue.workflow_run;
BEGIN
    SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = p_run_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow run % does not exist', p_run_id USING ERRCODE = 'P0002';
    END IF;
    RETURN r;
END $$;

-- Whether the receipt still holds the lease of a message of the workflow queue (locks the message
-- when it does).
CREATE OR REPLACE FUNCTION queue.workflow_holds_lease(p_queue text, p_msg_id bigint, p_receipt bigint)
 RETURNS boolean
 LANGUAGE plpgsql
AS $$
DECLARE
    v_vt timestamptz;
BEGIN
    EXECUTE queue.prepared_sql('q_hold_' || p_queue, 'q_' || p_queue,
        'SELECT vt FROM queue.%I WHERE msg_id = $1 FOR UPDATE',
        'bigint', format('%L', p_msg_id))
        INTO v_vt;
    RETURN v_vt IS NOT NULL AND queue.receipt_of(v_vt) = p_receipt;
END $$;

-- Deletes a message of the workflow queue if it belongs to the run's group; returns whether it did.
CREATE OR REPLACE FUNCTION queue.workflow_drop_message(p_queue text, p_run_id bigint, p_msg_id bigint)
 RETURNS boolean
 LANGUAGE plpgsql
AS $$
DECLARE
    v_group text;
BEGIN
    EXECUTE queue.prepared_sql('q_group_' || p_queue, 'q_' || p_queue,
        'SELECT group_id FROM queue.%I WHERE msg_id = $1',
        'bigint', format('%L', p_msg_id))
        INTO v_group;
    IF v_group IS DISTINCT FROM p_run_id::text THEN
        RETURN false;
    END IF;
    RETURN queue.delete(p_queue, p_msg_id);
END $$;

-- Makes a taken task due at p_at without counting the receive that took it: no step was attempted.
CREATE OR REPLACE FUNCTION queue.workflow_task_due_again(p_queue text, p_msg_id bigint, p_at timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
AS $$
BEGIN
    EXECUTE format('UPDATE queue.%I SET vt = $2, read_ct = greatest(read_ct - 1, 0) WHERE msg_id = $1',
                   'q_' || p_queue)
        USING p_msg_id, p_at;
END $$;

-- Leases up to p_qty due tasks of the given versions, each with its run's input and journal;
-- journals due wait timeouts; drops messages of ended runs. Nothing while the workflow is paused;
-- a paused run's due task is parked until its resume. With p_journal_max, a journal of more rows
-- than that is withheld (null): a worker that keeps the journals of its runs asks
-- workflow_journal_after for the rows it lacks. p_now (default: the clock) is the time tasks are
-- due by and leases run from, as in receive. p_worker and p_labels name the worker that polls and its
-- labels: a workflow's routing (worker_routing.sql) may keep tasks from it, hand it the tasks of
-- the runs that stick to it and of the lanes its labels hold, and make the runs it takes stick.
-- step_options: the retry options an operator set for the run's retrying step (step_retries.sql),
-- named by its "step"; null when none.
DROP FUNCTION IF EXISTS queue.workflow_poll(text, integer[], integer, integer, integer, timestamp with time zone);
-- A replacement cannot change a function's columns: the definition is dropped first (the Migrator
-- applies the files only when one changed).
DROP FUNCTION IF EXISTS queue.workflow_poll(text, integer[], integer, integer, integer, timestamp with time zone, text, jsonb);
CREATE OR REPLACE FUNCTION queue.workflow_poll(p_name text, p_versions integer[], p_qty integer, p_lease integer, p_journal_max integer DEFAULT NULL::integer, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_worker text DEFAULT NULL::text, p_labels jsonb DEFAULT NULL::jsonb)
 RETURNS TABLE(run_id bigint, msg_id bigint, receipt bigint, attempt integer, version integer, reason text, input jsonb, journal jsonb, started_at timestamp with time zone, trace_context text, step_options jsonb)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_queue  text := '__wf_' || p_name;
    v        int;
    x        record;
    m        queue.message;
    r        queue.workflow_run;
    n        int := 0;
    v_got    queue.message[];
    v_round  int := 0;
    v_held   int;
    v_parked int;
    v_last_key text;
    v_update boolean;
    v_routing queue.worker_routing;
    v_stick  boolean := false;
    v_ask    jsonb[] := '{}';
    v_lane   text;
    a        jsonb;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    PERFORM queue.check_range('max', p_qty, 1, 100);
    -- A lease of at least a second: a task leased for none would still be due to this poll's
    -- later rounds, and go out twice in one answer.
    PERFORM queue.check_range('leaseSeconds', p_lease, 1, 43200);
    IF p_versions IS NULL OR cardinality(p_versions) = 0 THEN
        RAISE EXCEPTION 'versions must name at least one version' USING ERRCODE = '22023';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM queue.queue_meta WHERE queue_name = v_queue) THEN
        RETURN;
    END IF;
    -- A paused workflow hands nothing out; its due tasks stay due for the resume (operations.sql).
    IF EXISTS (SELECT 1 FROM queue.workflow_pause wp WHERE wp.workflow_name = p_name) THEN
        RETURN;
    END IF;
    -- What to receive: the tasks of the runs that stick to this worker, then those of the lanes its
    -- labels hold, then those any worker may take, each of the versions asked.
    SELECT * INTO v_routing FROM queue.worker_routing wr WHERE wr.workflow_name = p_name;
    IF v_routing.workflow_name IS NOT NULL THEN
        IF NOT queue.worker_may_take(p_name, v_routing, p_labels) THEN
            RETURN;
        END IF;
        v_stick := v_routing.sticky AND p_worker IS NOT NULL;
        IF v_stick THEN
            FOREACH v IN ARRAY p_versions LOOP
                v_ask := v_ask || jsonb_build_object('v', v || '@w:' || p_worker);
            END LOOP;
        END IF;
    END IF;
    IF p_labels IS NOT NULL AND p_labels <> '{}'::jsonb THEN
        FOR v_lane IN SELECT rl.lane FROM queue.route_lane rl
                       WHERE rl.workflow_name = p_name AND p_labels @> rl.selector ORDER BY rl.lane LOOP
            FOREACH v IN ARRAY p_versions LOOP
                v_ask := v_ask || jsonb_build_object('v', v || '@l:' || v_lane);
            END LOOP;
        END LOOP;
    END IF;
    FOREACH v IN ARRAY p_versions LOOP
        v_ask := v_ask || jsonb_build_object('v', v);
    END LOOP;
    -- Each round receives due tasks of the versions asked and takes them in one order: those of runs
    -- without a concurrency key as received, then those of keyed runs in key order (flow_admit
    -- admits them or holds them back). Tasks parked or held back leave room that up to two more
    -- rounds fill.
    <<rounds>>
    LOOP
        v_round := v_round + 1;
        v_parked := 0;
        v_held := 0;
        v_got := '{}';
        FOREACH a IN ARRAY v_ask LOOP
            EXIT WHEN n + cardinality(v_got) >= p_qty;
            v_got := v_got || ARRAY(SELECT q FROM queue.receive(v_queue, p_qty - n - cardinality(v_got), p_lease,
                                                               a, p_now) q);
        END LOOP;
        FOR x IN SELECT (k.msg_id, k.read_ct, k.enqueued_at, k.vt, k.body, k.headers, k.group_id)::queue.message AS m,
                        wr AS r
                   FROM unnest(v_got) WITH ORDINALITY k
                   LEFT JOIN queue.workflow_run wr ON wr.run_id = k.group_id::bigint
                  ORDER BY wr.concurrency_key IS NOT NULL, wr.concurrency_key, k.ordinality LOOP
            m := x.m;
            r := x.r;
            -- An update task (updates.sql) is not the run's current message: its worker takes the
            -- run's pending updates, not the body, so no admission or pause holds it back.
            v_update := m.body ->> 'reason' = 'update';
            IF v_update THEN
                IF r.run_id IS NULL OR r.status <> 'running' THEN
                    PERFORM queue.delete(v_queue, m.msg_id);
                    CONTINUE;
                END IF;
            ELSE
                -- A keyed run's admission, or a wait's timeout, decides with the run's row locked (run
                -- before message, as elsewhere). A run someone holds (a signal deciding this wait,
                -- another admission) is stepped around instead of waited for: back in a second, this
                -- receive not counted.
                IF r.run_id IS NOT NULL AND (r.concurrency_key IS NOT NULL OR m.body ->> 'reason' = 'timeout') THEN
                    SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = m.group_id::bigint FOR UPDATE SKIP LOCKED;
                    IF NOT FOUND THEN
                        PERFORM queue.workflow_task_due_again(v_queue, m.msg_id, clock_timestamp() + interval '1 second');
                        CONTINUE;
                    END IF;
                END IF;
                IF r.run_id IS NULL OR r.status <> 'running' OR r.current_msg_id IS DISTINCT FROM m.msg_id THEN
                    PERFORM queue.delete(v_queue, m.msg_id);
                    CONTINUE;
                END IF;
                -- A task marked stepPaused (step_retries.sql) is parked while its step's retries are.
                IF r.paused_at IS NOT NULL OR (m.body ? 'stepPaused' AND queue.step_retry_paused(r)) THEN
                    PERFORM queue.workflow_park_paused(v_queue, r.run_id, m.msg_id);
                    v_parked := v_parked + 1;
                    CONTINUE;
                END IF;
                IF m.body ->> 'reason' = 'timeout' AND r.wait_step = m.body ->> 'step' THEN
                    -- A wait on several arms keeps what fired before the timeout.
                    INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, timed_out, started_at)
                    VALUES (r.run_id, r.wait_step,
                            (SELECT coalesce(max(s.seq), 0) + 1 FROM queue.workflow_step s WHERE s.run_id = r.run_id),
                            'wait', CASE WHEN r.wait_arms IS NOT NULL THEN jsonb_build_object('fired', r.wait_fired) END,
                            true, r.wait_since)
                    ON CONFLICT DO NOTHING;
                    UPDATE queue.workflow_run wr
                       SET wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL,
                           wait_arms = NULL, wait_all = NULL, wait_fired = NULL
                     WHERE wr.run_id = r.run_id;
                END IF;
                IF r.concurrency_key IS NOT NULL THEN
                    v_held := v_held + 1;
                    -- Key locks are taken in key order across rounds too: a key before one a previous
                    -- round locked is left due for the next poll (this receive not counted), else two
                    -- polls could wait for each other's keys.
                    IF r.concurrency_key < v_last_key THEN
                        PERFORM queue.workflow_task_due_again(v_queue, m.msg_id, clock_timestamp());
                        CONTINUE;
                    END IF;
                    v_last_key := r.concurrency_key;
                    CONTINUE WHEN NOT queue.flow_admit(v_queue, r, m.msg_id);
                    v_held := v_held - 1;
                END IF;
            END IF;
            -- A sticky workflow's run sticks to the worker that takes its task.
            IF v_stick AND NOT v_update AND r.sticky_worker IS DISTINCT FROM p_worker THEN
                UPDATE queue.workflow_run wr SET sticky_worker = p_worker WHERE wr.run_id = r.run_id;
            END IF;
            n := n + 1;
            run_id := r.run_id;
            msg_id := m.msg_id;
            receipt := queue.receipt_of(m.vt);
            attempt := m.read_ct;
            version := r.workflow_version;
            reason := m.body ->> 'reason';
            input := r.input;
            journal := CASE WHEN v_update THEN '[]'::jsonb
                            ELSE queue.workflow_journal_unless_longer(r.run_id, p_journal_max) END;
            started_at := r.started_at;
            trace_context := r.trace_context;
            step_options := m.body -> 'stepOptions';
            RETURN NEXT;
        END LOOP;
        EXIT rounds WHEN (v_held = 0 AND v_parked = 0) OR n >= p_qty OR v_round >= 3;
    END LOOP rounds;
END $$;

-- Extends the lease of a task whose step is still running; returns the new receipt, null when the
-- lease was lost.
CREATE OR REPLACE FUNCTION queue.workflow_extend_lease(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_lease integer)
 RETURNS bigint
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
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

-- Hands a run's task back to its queue, due after p_delay_ms (a step's retry backoff); ok, stale or
-- not_running. p_counts false takes back this delivery's count (a task no worker saw). p_step
-- names the step whose attempt failed, with p_error: recorded as the run's retrying step
-- (step_retries.sql), and parked instead when an operator paused that step's retries.
DROP FUNCTION IF EXISTS queue.workflow_retry(bigint, bigint, bigint, bigint, boolean);
CREATE OR REPLACE FUNCTION queue.workflow_retry(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_delay_ms bigint, p_counts boolean DEFAULT true, p_step text DEFAULT NULL::text, p_error jsonb DEFAULT NULL::jsonb)
 RETURNS text
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r        queue.workflow_run := queue.workflow_lock(p_run_id);
    v_queue  text := '__wf_' || r.workflow_name;
    v_due    timestamptz;
    v_step   boolean := p_step IS NOT NULL AND coalesce(p_counts, true);
    v_paused boolean := false;
    v_ct     int;
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
    IF v_step THEN
        PERFORM queue.check_step_name(p_step);
        v_paused := EXISTS (SELECT 1 FROM queue.step_retry_current(r) sr
                             WHERE sr.step_name = p_step AND sr.paused_at IS NOT NULL);
    END IF;
    v_due := clock_timestamp() + make_interval(secs => p_delay_ms / 1000.0);
    -- read_ct is the attempt the next delivery reports; a delivery that does not count gives its
    -- increment back.
    EXECUTE format('UPDATE queue.%I SET vt = CASE WHEN $4 THEN queue.parked_vt() ELSE $2 END,'
                   ' read_ct = CASE WHEN $3 THEN read_ct ELSE greatest(read_ct - 1, 0) END'
                   ' WHERE msg_id = $1 RETURNING read_ct', 'q_' || v_queue)
        USING p_msg_id, v_due, coalesce(p_counts, true), v_paused
        INTO v_ct;
    IF v_step THEN
        PERFORM queue.step_retry_record(r, p_step, p_error, v_ct, v_due);
    END IF;
    IF v_paused THEN
        PERFORM queue.flow_leave(r);
    END IF;
    RETURN 'ok';
END $$;

-- Parks the due task of a paused run, or of a run whose retrying step is paused, just received: not
-- due until the run (or step) is resumed (workflow_run_pause, workflow_step_pause make it due), this
-- receive not counted. Decided with the run's row locked,
-- as a resume locks it: a run someone holds is looked at again in a second, a run resumed since
-- the poll read it is due again now. A keyed run gives up its slot, or its place in line (a slot
-- kept for it passed on), to the next run of its key; after the resume it is admitted afresh.
CREATE OR REPLACE FUNCTION queue.workflow_park_paused(p_queue text, p_run_id bigint, p_msg_id bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $$
DECLARE
    r      queue.workflow_run;
    v_park boolean;
BEGIN
    SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = p_run_id FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        PERFORM queue.workflow_task_due_again(p_queue, p_msg_id, clock_timestamp() + interval '1 second');
        RETURN;
    END IF;
    IF r.status <> 'running' OR r.current_msg_id IS DISTINCT FROM p_msg_id THEN
        PERFORM queue.delete(p_queue, p_msg_id);
        RETURN;
    END IF;
    v_park := r.paused_at IS NOT NULL OR queue.step_retry_paused(r);
    PERFORM queue.workflow_task_due_again(p_queue, p_msg_id,
                                          CASE WHEN v_park THEN queue.parked_vt() ELSE clock_timestamp() END);
    IF v_park THEN
        PERFORM queue.flow_leave(r);
    END IF;
END $$;
