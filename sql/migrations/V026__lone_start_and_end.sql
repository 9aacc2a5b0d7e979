-- A lone start handed to a waiting poll and a completion that ends its run
-- did their work through a second function and a second statement where
-- one does.
--
-- workflow_start_leased's lone start without an idempotency key is written
-- in the function itself instead of through workflow_start, and when the
-- poll runs the run's version its first message is inserted leased (read_ct
-- 1, visible again after the lease), as the receive that leased it after
-- the insert left it. The message gets one row version instead of two. The
-- answer and the wake-ups do not change; a lone start with a key, and a
-- batch, take the paths they took.
--
-- workflow_complete_ended checks the held message's lease and reads its
-- receive count in one prepared statement, and takes the run's version,
-- times and trace from the update that ends it, instead of calling
-- workflow_complete_step and reading the run again. A run that is not
-- running, or a message whose lease is gone, still goes to
-- workflow_complete_step, which answers not_running or stale as before.
-- One difference: a result whose status is missing is refused with 22023
-- where it failed on the status column's NOT NULL.

CREATE OR REPLACE FUNCTION queue.workflow_start_leased(
    p_name text,
    p_items jsonb,
    p_versions int[],
    p_take int,
    p_lease int,
    p_max_retention_days int DEFAULT 365
) RETURNS TABLE (
    ord           int,
    run_id        bigint,
    status        queue.workflow_status,
    created       boolean,
    msg_id        bigint,
    receipt       bigint,
    attempt       int,
    version       int,
    reason        text,
    started_at    timestamptz,
    trace_context text
)
LANGUAGE plpgsql AS $$
DECLARE
    v_queue   text := '__wf_' || p_name;
    v_seen    text := coalesce(current_setting('queue.notified', true), '');
    v_item    jsonb;
    v_ords    int[];
    v_runs    bigint[];
    v_status  queue.workflow_status[];
    v_created boolean[];
    v_made    int;
    v_take_runs bigint[];
    v_take    bigint[];
    v_msgs    bigint[];
    v_cts     int[];
    v_vts     timestamptz[];
    v_reasons text[];
    v_version int;
    v_keep    int;
    v_now     timestamptz;
    v_held    boolean;
    v_msg     bigint;
    v_vt      timestamptz;
    v_started timestamptz;
    v_trace   text;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    PERFORM queue.check_range('take', p_take, 1, 100);
    PERFORM queue.check_range('lease', p_lease, 1, 43200);
    IF p_versions IS NULL OR cardinality(p_versions) = 0 OR array_position(p_versions, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'versions must name at least one version' USING ERRCODE = '22023';
    END IF;
    -- The starts' own NOTIFY is held back: whether one is needed is known
    -- only once the leases are taken.
    IF position('/' || v_queue || '/' IN v_seen) = 0 THEN
        PERFORM set_config('queue.notified', v_seen || '/' || v_queue || '/', true);
    END IF;

    -- A lone, well-formed item takes a single start, which is cheaper than
    -- the set-based one for one run; anything else takes the batch, which
    -- also finds and names what is wrong with an item.
    IF jsonb_typeof(p_items) = 'array' AND jsonb_array_length(p_items) = 1 THEN
        v_item := p_items -> 0;
        IF jsonb_typeof(v_item) <> 'object'
           OR jsonb_typeof(coalesce(v_item -> 'version', 'null')) NOT IN ('number', 'null')
           OR jsonb_typeof(coalesce(v_item -> 'retentionDays', 'null')) NOT IN ('number', 'null')
           OR jsonb_typeof(coalesce(v_item -> 'idempotencyKey', 'null')) NOT IN ('string', 'null')
           OR jsonb_typeof(coalesce(v_item -> 'traceContext', 'null')) NOT IN ('string', 'null') THEN
            v_item := NULL;
        END IF;
    END IF;
    -- A lone start without a key: written here, its first message inserted
    -- already leased when the poll runs its version.
    IF v_item IS NOT NULL AND v_item ->> 'idempotencyKey' IS NULL THEN
        v_version := (v_item ->> 'version')::int;
        v_keep := (v_item ->> 'retentionDays')::int;
        IF v_version IS NOT NULL THEN
            PERFORM queue.check_range('version', v_version, 1, 1000000);
        END IF;
        IF v_keep IS NOT NULL THEN
            PERFORM queue.check_range('retentionDays', v_keep, 1, 36500);
        END IF;
        IF v_version IS NULL THEN
            SELECT coalesce(max(wv.version), 1) INTO v_version
              FROM queue.workflow_version wv WHERE wv.workflow_name = p_name;
        END IF;
        IF NOT EXISTS (SELECT 1 FROM queue.queue_meta m WHERE m.queue_name = v_queue) THEN
            PERFORM queue.create_queue(v_queue, true, 60, NULL);
        END IF;
        v_now := clock_timestamp();
        v_held := v_version = ANY (p_versions);
        ord := 1;
        run_id := nextval(pg_get_serial_sequence('queue.workflow_run', 'run_id'));
        status := 'running';
        created := true;
        EXECUTE queue.prepared_sql('wf_first_held_' || p_name, 'q_' || v_queue, $q$
            INSERT INTO queue.%1$I (group_id, head, enqueued_at, vt, read_ct, body)
            VALUES ($1, true, $2, $3, $4, $5) RETURNING msg_id, vt$q$,
            'text, timestamptz, timestamptz, int, jsonb',
            format('%L, %L, %L, %L, %L', run_id::text, v_now,
                   CASE WHEN v_held THEN v_now + make_interval(secs => p_lease) ELSE v_now END,
                   CASE WHEN v_held THEN 1 ELSE 0 END,
                   jsonb_build_object('v', v_version, 'reason', 'start')))
            INTO v_msg, v_vt;
        INSERT INTO queue.workflow_run AS wr (run_id, workflow_name, workflow_version, input, retention_days,
                                              trace_context, current_msg_id)
        OVERRIDING SYSTEM VALUE
        VALUES (run_id, p_name, v_version, coalesce(v_item -> 'input', 'null'::jsonb),
                least(coalesce(v_keep, 30), p_max_retention_days), v_item ->> 'traceContext', v_msg)
        RETURNING wr.started_at, wr.trace_context INTO v_started, v_trace;
        IF v_held THEN
            msg_id := v_msg;
            receipt := queue.receipt_of(v_vt);
            attempt := 1;
            version := v_version;
            reason := 'start';
            started_at := v_started;
            trace_context := v_trace;
        ELSIF position('/' || v_queue || '/' IN v_seen) = 0 THEN
            PERFORM pg_notify('queue_wakeup', v_queue);
        END IF;
        RETURN NEXT;
        RETURN;
    END IF;

    -- A lone start with a key: the run row decides which of racing starts
    -- wins, then its first message is leased if the run is new.
    IF v_item IS NOT NULL THEN
        SELECT s.run_id, s.status, s.created INTO run_id, status, created
          FROM queue.workflow_start(p_name, coalesce(v_item -> 'input', 'null'::jsonb),
                                    (v_item ->> 'version')::int, v_item ->> 'idempotencyKey',
                                    (v_item ->> 'retentionDays')::int, p_max_retention_days,
                                    v_item ->> 'traceContext') s;
        ord := 1;
        IF created THEN
            EXECUTE queue.prepared_sql('wf_lease_run_' || v_queue, 'q_' || v_queue, $q$
                WITH r AS (
                    SELECT wr.current_msg_id, wr.workflow_version, wr.started_at, wr.trace_context
                      FROM queue.workflow_run wr
                     WHERE wr.run_id = $1 AND wr.workflow_version = ANY ($2)),
                     l AS (
                    UPDATE queue.%1$I q
                       SET vt = $3 + make_interval(secs => $4), read_ct = q.read_ct + 1
                      FROM r
                     WHERE q.msg_id = r.current_msg_id AND q.head AND q.vt <= $3
                    RETURNING q.msg_id, q.read_ct, q.vt, q.body ->> 'reason' AS reason)
                SELECT l.msg_id, queue.receipt_of(l.vt), l.read_ct, r.workflow_version, l.reason,
                       r.started_at, r.trace_context
                  FROM l, r$q$,
                'bigint, int[], timestamptz, int',
                format('%L, %L, %L, %L', run_id, p_versions, clock_timestamp(), p_lease))
                INTO msg_id, receipt, attempt, version, reason, started_at, trace_context;
            IF msg_id IS NULL AND position('/' || v_queue || '/' IN v_seen) = 0 THEN
                PERFORM pg_notify('queue_wakeup', v_queue);
            END IF;
        END IF;
        RETURN NEXT;
        RETURN;
    END IF;

    SELECT array_agg(b.ord ORDER BY b.ord), array_agg(b.run_id ORDER BY b.ord),
           array_agg(b.status ORDER BY b.ord), array_agg(b.created ORDER BY b.ord)
      INTO v_ords, v_runs, v_status, v_created
      FROM queue.workflow_start_batch(p_name, p_items, p_max_retention_days) b;

    -- The first messages to lease: of runs created here, in item order.
    SELECT count(*) FILTER (WHERE u.made),
           array_agg(u.run ORDER BY u.n) FILTER (WHERE u.take),
           array_agg(u.msg ORDER BY u.n) FILTER (WHERE u.take)
      INTO v_made, v_take_runs, v_take
      FROM (SELECT c.made, c.run, r.current_msg_id AS msg, c.n,
                   c.made AND r.workflow_version = ANY (p_versions)
                     AND count(*) FILTER (WHERE c.made AND r.workflow_version = ANY (p_versions))
                           OVER (ORDER BY c.n) <= p_take AS take
              FROM unnest(v_runs, v_created) WITH ORDINALITY c(run, made, n)
              JOIN queue.workflow_run r ON r.run_id = c.run) u;

    IF v_take IS NOT NULL THEN
        -- The rows were written by this transaction, so nobody else can hold them.
        EXECUTE queue.prepared_sql('wf_lease_new_' || v_queue, 'q_' || v_queue, $q$
            WITH l AS (
                UPDATE queue.%1$I q
                   SET vt = $2 + make_interval(secs => $3), read_ct = q.read_ct + 1
                 WHERE q.msg_id = ANY ($1) AND q.head AND q.vt <= $2
                RETURNING q.msg_id, q.read_ct, q.vt, q.body ->> 'reason' AS reason)
            SELECT array_agg(l.msg_id), array_agg(l.read_ct), array_agg(l.vt), array_agg(l.reason) FROM l$q$,
            'bigint[], timestamptz, int',
            format('%L, %L, %L', v_take, clock_timestamp(), p_lease))
            INTO v_msgs, v_cts, v_vts, v_reasons;
    END IF;

    IF v_made > coalesce(cardinality(v_msgs), 0) AND position('/' || v_queue || '/' IN v_seen) = 0 THEN
        PERFORM pg_notify('queue_wakeup', v_queue);
    END IF;
    RETURN QUERY
        SELECT u.o, u.run, u.st, u.made, l.msg, queue.receipt_of(l.vt), l.ct, r.workflow_version, l.reason,
               r.started_at, r.trace_context
          FROM unnest(v_ords, v_runs, v_status, v_created) u(o, run, st, made)
          LEFT JOIN (unnest(v_take_runs, v_take) t(run, msg)
                     JOIN unnest(v_msgs, v_cts, v_vts, v_reasons) l(msg, ct, vt, reason) ON l.msg = t.msg
                     JOIN queue.workflow_run r ON r.run_id = t.run)
            ON t.run = u.run
         ORDER BY u.o;
END $$;

ALTER FUNCTION queue.workflow_start_leased(text, jsonb, int[], int, int, int) SET enable_seqscan = off;
ALTER FUNCTION queue.workflow_start_leased(text, jsonb, int[], int, int, int) SET plan_cache_mode = force_generic_plan;

CREATE OR REPLACE FUNCTION queue.workflow_complete_ended(
    p_run_id bigint,
    p_msg_id bigint,
    p_receipt bigint,
    p_step_name text,
    p_step_kind text,
    p_output jsonb,
    p_error jsonb,
    p_started_at timestamptz,
    p_result jsonb,
    p_lease int DEFAULT 60
) RETURNS TABLE (
    outcome       text,
    version       int,
    started_at    timestamptz,
    completed_at  timestamptz,
    trace_context text
)
LANGUAGE plpgsql AS $$
DECLARE
    r        queue.workflow_run;
    v_queue  text;
    v_ct     int;
    v_status text := p_result ->> 'status';
BEGIN
    IF p_result IS NULL THEN
        RAISE EXCEPTION 'a completion that ends a run needs a result' USING ERRCODE = '22023';
    END IF;
    r := queue.workflow_lock(p_run_id);
    v_queue := '__wf_' || r.workflow_name;
    IF r.status = 'running' AND r.current_msg_id = p_msg_id THEN
        -- The held message, locked, where the receipt still holds its lease.
        EXECUTE queue.prepared_sql('wf_end_hold_' || v_queue, 'q_' || v_queue, $q$
            SELECT q.read_ct FROM queue.%1$I q
             WHERE q.msg_id = $1 AND queue.receipt_of(q.vt) = $2
               FOR UPDATE$q$,
            'bigint, bigint',
            format('%L, %L', p_msg_id, p_receipt))
            INTO v_ct;
    END IF;
    IF v_ct IS NULL THEN
        -- Not running, or stale: the general path answers (and drops what it must).
        SELECT c.outcome INTO outcome
          FROM queue.workflow_complete_step(p_run_id, p_msg_id, p_receipt, p_step_name, p_step_kind,
                                            p_output, p_error, p_started_at, NULL, p_result, p_lease) c;
        RETURN NEXT;
        RETURN;
    END IF;
    IF v_status IS NULL OR v_status NOT IN ('completed', 'failed') THEN
        RAISE EXCEPTION 'a completion needs next or a result with status completed or failed'
            USING ERRCODE = '22023';
    END IF;
    IF p_step_name IS NOT NULL THEN
        PERFORM queue.check_step_name(p_step_name);
        IF p_step_kind IS NULL OR p_step_kind NOT IN ('run', 'sleep', 'wait') THEN
            RAISE EXCEPTION 'step kind must be run, sleep or wait' USING ERRCODE = '22023';
        END IF;
        INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, error, attempts, started_at)
        VALUES (p_run_id, p_step_name,
                (SELECT coalesce(max(s.seq), 0) + 1 FROM queue.workflow_step s WHERE s.run_id = p_run_id),
                p_step_kind, p_output, p_error, greatest(v_ct, 1),
                coalesce(p_started_at, clock_timestamp()))
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            PERFORM queue.delete(v_queue, p_msg_id);
            outcome := 'duplicate';
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;
    IF v_status = 'failed' AND p_result -> 'error' IS NULL THEN
        RAISE EXCEPTION 'a failed result needs an error' USING ERRCODE = '22023';
    END IF;
    UPDATE queue.workflow_run wr
       SET status = v_status::queue.workflow_status,
           output = CASE WHEN v_status = 'completed' THEN p_result -> 'output' END,
           error = CASE WHEN v_status = 'failed' THEN p_result -> 'error' END,
           completed_at = clock_timestamp(),
           current_msg_id = NULL,
           wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL
     WHERE wr.run_id = p_run_id
    RETURNING wr.workflow_version, wr.started_at, wr.completed_at, wr.trace_context
         INTO version, started_at, completed_at, trace_context;
    PERFORM queue.delete(v_queue, p_msg_id);
    outcome := 'ok';
    RETURN NEXT;
END $$;

ALTER FUNCTION queue.workflow_complete_ended(bigint, bigint, bigint, text, text, jsonb, jsonb, timestamptz, jsonb, int)
    SET enable_seqscan = off;
ALTER FUNCTION queue.workflow_complete_ended(bigint, bigint, bigint, text, text, jsonb, jsonb, timestamptz, jsonb, int)
    SET plan_cache_mode = force_generic_plan;
