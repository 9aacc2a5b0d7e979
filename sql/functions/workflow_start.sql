-- Starting runs: single, batched, and leased to a waiting worker in the same transaction.

-- Records the versions a worker serves, so starts without a version take the newest.
CREATE OR REPLACE FUNCTION queue.workflow_register_versions(p_name text, p_versions integer[])
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    INSERT INTO queue.workflow_version (workflow_name, version)
    SELECT p_name, v FROM unnest(p_versions) v WHERE v >= 1
    ON CONFLICT (workflow_name, version) DO UPDATE SET last_seen_at = now();
END $$;

-- Starts a run (idempotent by key): the run row and its first message on __wf_<name>, in one
-- transaction. p_timing's fields (see workflow_timing) may make the first task due later, give the
-- run a deadline, or fold the start into the pending run of its debounce key (created false).
-- p_max_retention_days caps the retention; null (a start made through SQL) means the ceiling the
-- servers stored (queue.max_retention_days). A start with a concurrencyKey whose workflow has a
-- concurrency limit is answered with what its strategy made of it (admission: started, queued,
-- cancelled or skipped, see flow_strategy) and the runs it cancelled; admission is null otherwise.
-- A skipped start makes no run: it answers the key's newest running run (created false). A child's
-- start is never skipped: its parent waits for that very run, so it is made and cancelled instead.
-- A continuation (continuedFrom in p_timing) takes its key as it is, strategy or not. A workflow's
-- throttle (throttles.sql) makes a start's first task due at its turn (throttled_until).
-- p_timing's attributes set the new run's search attributes (search_attributes.sql).
DROP FUNCTION IF EXISTS queue.workflow_start(text, jsonb, integer, text, integer, integer, text);
DROP FUNCTION IF EXISTS queue.workflow_start(text, jsonb, integer, text, integer, integer, text, jsonb);
CREATE OR REPLACE FUNCTION queue.workflow_start(p_name text, p_input jsonb, p_version integer DEFAULT NULL::integer, p_idempotency_key text DEFAULT NULL::text, p_retention_days integer DEFAULT NULL::integer, p_max_retention_days integer DEFAULT NULL::integer, p_trace_context text DEFAULT NULL::text, p_timing jsonb DEFAULT NULL::jsonb)
 RETURNS TABLE(run_id bigint, status queue.workflow_status, created boolean, admission text, cancelled_runs bigint[])
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_queue     text := '__wf_' || p_name;
    v_version   int := p_version;
    v_retention int;
    v_run       bigint;
    v_msg       bigint;
    v_now       timestamptz := clock_timestamp();
    v_timed     boolean := queue.workflow_timed(p_timing);
    v_due       timestamptz;
    v_deadline  timestamptz;
    v_debounce  text;
    v_window    int;
    v_key       text;
    v_strategy  text;
    v_slots     int;
    v_full      boolean;
    v_newest    bigint;
    v_admission text;
    v_cancelled bigint[];
    v_admit     timestamptz;
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
    IF v_timed THEN
        SELECT t.due_at, t.deadline_at, t.debounce_key, t.debounce_ms
          INTO v_due, v_deadline, v_debounce, v_window
          FROM queue.workflow_timing(p_timing, v_now) t;
        IF v_debounce IS NOT NULL AND p_idempotency_key IS NOT NULL THEN
            RAISE EXCEPTION 'debounceKey cannot be combined with idempotencyKey' USING ERRCODE = '22023';
        END IF;
    END IF;
    v_retention := least(coalesce(p_retention_days, 30), coalesce(p_max_retention_days, queue.max_retention_days()));
    IF v_version IS NULL THEN
        SELECT coalesce(max(version), 1) INTO v_version
          FROM queue.workflow_version WHERE workflow_name = p_name;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM queue.queue_meta WHERE queue_name = v_queue) THEN
        PERFORM queue.create_queue(v_queue, true, 60, NULL);
    END IF;
    IF v_debounce IS NOT NULL THEN
        v_run := queue.workflow_debounce(p_name, v_debounce, v_window, p_input, p_timing, v_now);
        IF v_run IS NOT NULL THEN
            RETURN QUERY SELECT v_run, 'running'::queue.workflow_status, false, NULL::text, NULL::bigint[];
            RETURN;
        END IF;
    END IF;
    IF queue.flow_fields(p_timing) THEN
        v_key := queue.flow_key_of(p_timing);
    END IF;
    IF v_key IS NOT NULL AND NOT p_timing ? 'continuedFrom' THEN
        SELECT f.strategy, f.slot_limit, f.key_full, f.newest INTO v_strategy, v_slots, v_full, v_newest
          FROM queue.flow_strategy(p_name, v_key, p_input) f;
        IF v_strategy = 'skip' AND v_full AND coalesce(p_idempotency_key, '') NOT LIKE '\_\_child/%' THEN
            -- A repeat of a start that made its run answers that run, as any repeat does.
            RETURN QUERY SELECT r.run_id, r.status, false, NULL::text, NULL::bigint[] FROM queue.workflow_run r
                          WHERE r.workflow_name = p_name AND r.idempotency_key = p_idempotency_key;
            IF NOT FOUND THEN
                RETURN QUERY SELECT v_newest, 'running'::queue.workflow_status, false, 'skipped'::text,
                                    NULL::bigint[];
            END IF;
            RETURN;
        END IF;
    END IF;

    IF p_idempotency_key IS NOT NULL OR v_timed OR queue.flow_fields(p_timing) OR queue.workflow_throttled(p_name)
       OR p_timing ? 'attributes' THEN
        INSERT INTO queue.workflow_run (workflow_name, workflow_version, input, idempotency_key, retention_days,
                                        trace_context, due_at, deadline_at, debounce_key)
        VALUES (p_name, v_version, p_input, p_idempotency_key, v_retention, p_trace_context,
                v_due, v_deadline, v_debounce)
        ON CONFLICT (workflow_name, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
        RETURNING workflow_run.run_id INTO v_run;
        IF v_run IS NULL THEN
            RETURN QUERY SELECT r.run_id, r.status, false, NULL::text, NULL::bigint[] FROM queue.workflow_run r
                          WHERE r.workflow_name = p_name AND r.idempotency_key = p_idempotency_key;
            RETURN;
        END IF;
        -- A throttle queues the start for its turn (a continuation, or a start its strategy is about
        -- to cancel, takes none).
        IF NOT coalesce(p_timing ? 'continuedFrom', false)
           AND NOT (coalesce(v_full, false) AND v_strategy IN ('cancel_newest', 'skip')) THEN
            v_admit := queue.throttle_admit(p_name, v_key, coalesce(v_due, v_now));
            IF v_admit > coalesce(v_due, v_now) THEN
                v_due := v_admit;
            ELSE
                v_admit := NULL;
            END IF;
        END IF;
        IF p_timing ? 'attributes' THEN
            PERFORM queue.run_attributes_set(v_run, p_timing -> 'attributes');
        END IF;
        v_msg := queue.enqueue(v_queue, jsonb_build_object('v', v_version, 'reason', 'start'), NULL, 0, v_run::text,
                               v_now, v_due);
        UPDATE queue.workflow_run r SET current_msg_id = v_msg, throttled_until = v_admit WHERE r.run_id = v_run;
        IF queue.flow_fields(p_timing) THEN
            PERFORM queue.flow_start(v_run, p_timing, v_slots);
        END IF;
        IF v_strategy IS NOT NULL THEN
            SELECT a.admission, a.cancelled_runs INTO v_admission, v_cancelled
              FROM queue.flow_apply_strategy(v_run, p_name, v_key,
                                             CASE WHEN v_strategy = 'skip' THEN 'cancel_newest' ELSE v_strategy END,
                                             v_full, v_slots) a;
            RETURN QUERY SELECT v_run, CASE WHEN v_admission = 'cancelled' THEN 'cancelled'
                                            ELSE 'running' END::queue.workflow_status,
                                true, v_admission, v_cancelled;
            RETURN;
        END IF;
        RETURN QUERY SELECT v_run, 'running'::queue.workflow_status, true, NULL::text, NULL::bigint[];
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
    RETURN QUERY SELECT v_run, 'running'::queue.workflow_status, true, NULL::text, NULL::bigint[];
END $$;

-- Starts each item of a batch through workflow_start, one by one; answers in item order.
DROP FUNCTION IF EXISTS queue.workflow_start_each(text, jsonb, integer);
CREATE OR REPLACE FUNCTION queue.workflow_start_each(p_name text, p_items jsonb, p_max_retention_days integer DEFAULT 365)
 RETURNS TABLE(ord integer, run_id bigint, status queue.workflow_status, created boolean, admission text, cancelled_runs bigint[])
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    i record;
    s record;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    IF p_items IS NULL OR jsonb_typeof(p_items) <> 'array' THEN
        RAISE EXCEPTION 'runs must be a JSON array' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('batch size', jsonb_array_length(p_items), 1, 100);
    FOR i IN SELECT e.value AS item, e.ordinality::int AS n
               FROM jsonb_array_elements(p_items) WITH ORDINALITY e LOOP
        IF jsonb_typeof(i.item) <> 'object' THEN
            RAISE EXCEPTION 'each run must be a JSON object' USING ERRCODE = '22023';
        END IF;
        IF (i.item ? 'version' AND jsonb_typeof(i.item -> 'version') NOT IN ('number', 'null'))
           OR (i.item ? 'retentionDays' AND jsonb_typeof(i.item -> 'retentionDays') NOT IN ('number', 'null'))
           OR (i.item ? 'idempotencyKey' AND jsonb_typeof(i.item -> 'idempotencyKey') NOT IN ('string', 'null'))
           OR (i.item ? 'traceContext' AND jsonb_typeof(i.item -> 'traceContext') NOT IN ('string', 'null')) THEN
            RAISE EXCEPTION 'run %: version and retentionDays must be numbers, idempotencyKey and traceContext strings', i.n
                USING ERRCODE = '22023';
        END IF;
        SELECT * INTO s FROM queue.workflow_start(
            p_name,
            coalesce(i.item -> 'input', 'null'::jsonb),
            (i.item ->> 'version')::int,
            i.item ->> 'idempotencyKey',
            (i.item ->> 'retentionDays')::int,
            p_max_retention_days,
            i.item ->> 'traceContext',
            i.item);
        ord := i.n;
        run_id := s.run_id;
        status := s.status;
        created := s.created;
        admission := s.admission;
        cancelled_runs := s.cancelled_runs;
        RETURN NEXT;
    END LOOP;
END $$;

-- Starts a batch of runs set-based (keys deduplicated against each other and the table); answers in
-- item order.
DROP FUNCTION IF EXISTS queue.workflow_start_batch(text, jsonb, integer);
CREATE OR REPLACE FUNCTION queue.workflow_start_batch(p_name text, p_items jsonb, p_max_retention_days integer DEFAULT 365)
 RETURNS TABLE(ord integer, run_id bigint, status queue.workflow_status, created boolean, admission text, cancelled_runs bigint[])
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_queue    text := '__wf_' || p_name;
    v_now      timestamptz := clock_timestamp();
    v_bad      int;
    v_object   boolean;
    v_default  int;
    v_inputs   jsonb[];
    v_versions int[];
    v_keep     int[];
    v_traces   text[];
    v_runs     bigint[];
    v_msgs     bigint[];
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    IF p_items IS NULL OR jsonb_typeof(p_items) <> 'array' THEN
        RAISE EXCEPTION 'runs must be a JSON array' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('batch size', jsonb_array_length(p_items), 1, 100);
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_items) e
                WHERE e.value ->> 'idempotencyKey' IS NOT NULL OR queue.workflow_timed(e.value)
                   OR queue.flow_fields(e.value) OR e.value ? 'attributes')
       OR queue.workflow_throttled(p_name) THEN
        RETURN QUERY SELECT * FROM queue.workflow_start_each(p_name, p_items, p_max_retention_days);
        RETURN;
    END IF;
    -- The first bad item, as the start-by-start function finds it.
    SELECT e.n, jsonb_typeof(e.value) = 'object' INTO v_bad, v_object
      FROM jsonb_array_elements(p_items) WITH ORDINALITY e(value, n)
     WHERE jsonb_typeof(e.value) <> 'object'
        OR (e.value ? 'version' AND jsonb_typeof(e.value -> 'version') NOT IN ('number', 'null'))
        OR (e.value ? 'retentionDays' AND jsonb_typeof(e.value -> 'retentionDays') NOT IN ('number', 'null'))
        OR (e.value ? 'traceContext' AND jsonb_typeof(e.value -> 'traceContext') NOT IN ('string', 'null'))
     ORDER BY e.n
     LIMIT 1;
    IF v_bad IS NOT NULL AND NOT v_object THEN
        RAISE EXCEPTION 'each run must be a JSON object' USING ERRCODE = '22023';
    ELSIF v_bad IS NOT NULL THEN
        RAISE EXCEPTION 'run %: version and retentionDays must be numbers, idempotencyKey and traceContext strings', v_bad
            USING ERRCODE = '22023';
    END IF;

    SELECT array_agg(coalesce(e.value -> 'input', 'null'::jsonb) ORDER BY e.n),
           array_agg((e.value ->> 'version')::int ORDER BY e.n),
           array_agg((e.value ->> 'retentionDays')::int ORDER BY e.n),
           array_agg(e.value ->> 'traceContext' ORDER BY e.n)
      INTO v_inputs, v_versions, v_keep, v_traces
      FROM jsonb_array_elements(p_items) WITH ORDINALITY e(value, n);
    PERFORM queue.check_range('version', v, 1, 1000000) FROM unnest(v_versions) v WHERE v IS NOT NULL;
    PERFORM queue.check_range('retentionDays', d, 1, 36500) FROM unnest(v_keep) d WHERE d IS NOT NULL;
    IF EXISTS (SELECT 1 FROM unnest(v_versions) v WHERE v IS NULL) THEN
        SELECT coalesce(max(version), 1) INTO v_default
          FROM queue.workflow_version WHERE workflow_name = p_name;
        v_versions := ARRAY(SELECT coalesce(v, v_default) FROM unnest(v_versions) WITH ORDINALITY u(v, n) ORDER BY n);
    END IF;
    v_keep := ARRAY(SELECT least(coalesce(d, 30), p_max_retention_days)
                      FROM unnest(v_keep) WITH ORDINALITY u(d, n) ORDER BY n);
    IF NOT EXISTS (SELECT 1 FROM queue.queue_meta WHERE queue_name = v_queue) THEN
        PERFORM queue.create_queue(v_queue, true, 60, NULL);
    END IF;

    -- Each run is the only member of its new group, so its first message is
    -- the group's head (as in workflow_start).
    v_runs := ARRAY(SELECT nextval(pg_get_serial_sequence('queue.workflow_run', 'run_id'))
                      FROM generate_series(1, cardinality(v_inputs)) g ORDER BY g);
    EXECUTE queue.prepared_sql('wf_firsts_' || p_name, 'q_' || v_queue, $q$
        WITH m AS (
            INSERT INTO queue.%1$I (group_id, head, enqueued_at, vt, body)
            SELECT u.run::text, true, $2, $2, jsonb_build_object('v', u.v, 'reason', 'start')
              FROM unnest($1, $3) AS u(run, v)
            RETURNING msg_id, group_id)
        SELECT array_agg(m.msg_id ORDER BY m.group_id::bigint) FROM m$q$,
        'bigint[], timestamptz, int[]',
        format('%L, %L, %L', v_runs, v_now, v_versions))
        INTO v_msgs;
    INSERT INTO queue.workflow_run (run_id, workflow_name, workflow_version, input, retention_days,
                                    trace_context, current_msg_id)
    OVERRIDING SYSTEM VALUE
    SELECT u.run, p_name, u.v, u.input, u.keep, u.trace, u.msg
      FROM unnest(v_runs, v_versions, v_inputs, v_keep, v_traces, v_msgs) AS u(run, v, input, keep, trace, msg);
    PERFORM queue.notify_once(v_queue);
    RETURN QUERY SELECT u.n::int, u.run, 'running'::queue.workflow_status, true, NULL::text, NULL::bigint[]
                   FROM unnest(v_runs) WITH ORDINALITY u(run, n) ORDER BY u.n;
END $$;

-- Starts runs and leases up to p_take of their first tasks to the caller in the same transaction (a
-- start handed to a waiting worker).
DROP FUNCTION IF EXISTS queue.workflow_start_leased(text, jsonb, integer[], integer, integer, integer);
CREATE OR REPLACE FUNCTION queue.workflow_start_leased(p_name text, p_items jsonb, p_versions integer[], p_take integer, p_lease integer, p_max_retention_days integer DEFAULT 365)
 RETURNS TABLE(ord integer, run_id bigint, status queue.workflow_status, created boolean, msg_id bigint, receipt bigint, attempt integer, version integer, reason text, started_at timestamp with time zone, trace_context text, admission text, cancelled_runs bigint[])
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_queue   text := '__wf_' || p_name;
    v_seen    text := coalesce(current_setting('queue.notified', true), '');
    v_item    jsonb;
    v_ords    int[];
    v_runs    bigint[];
    v_status  queue.workflow_status[];
    v_created boolean[];
    v_admits  text[];
    v_cancels jsonb[];
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
    -- A paused workflow takes starts but hands nothing out: no run has version 0, so none is leased.
    -- Nor does one whose tasks go to chosen workers (worker_routing.sql): its polls choose.
    IF EXISTS (SELECT 1 FROM queue.workflow_pause wp WHERE wp.workflow_name = p_name)
       OR EXISTS (SELECT 1 FROM queue.worker_routing wr WHERE wr.workflow_name = p_name) THEN
        p_versions := ARRAY[0];
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
    IF v_item IS NOT NULL AND v_item ->> 'idempotencyKey' IS NULL AND NOT queue.workflow_timed(v_item)
       AND NOT queue.flow_fields(v_item) AND NOT v_item ? 'attributes' AND NOT queue.workflow_throttled(p_name) THEN
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

    -- A lone start with a key or timing: the run row decides which of racing
    -- starts wins, then its first message is leased if the run is new and due.
    IF v_item IS NOT NULL THEN
        SELECT s.run_id, s.status, s.created, s.admission, s.cancelled_runs
          INTO run_id, status, created, admission, cancelled_runs
          FROM queue.workflow_start(p_name, coalesce(v_item -> 'input', 'null'::jsonb),
                                    (v_item ->> 'version')::int, v_item ->> 'idempotencyKey',
                                    (v_item ->> 'retentionDays')::int, p_max_retention_days,
                                    v_item ->> 'traceContext', v_item) s;
        ord := 1;
        IF created THEN
            EXECUTE queue.prepared_sql('wf_lease_run_' || v_queue, 'q_' || v_queue, $q$
                WITH r AS (
                    SELECT wr.current_msg_id, wr.workflow_version, wr.started_at, wr.trace_context
                      FROM queue.workflow_run wr
                     WHERE wr.run_id = $1 AND wr.workflow_version = ANY ($2) AND wr.concurrency_key IS NULL),
                     l AS (
                    UPDATE queue.%1$I q
                       SET vt = $3 + make_interval(secs => $4), read_ct = q.read_ct + 1
                     WHERE q.msg_id = (SELECT r.current_msg_id FROM r)
                       AND CASE WHEN q.head THEN q.vt <= $3 ELSE false END
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
           array_agg(b.status ORDER BY b.ord), array_agg(b.created ORDER BY b.ord),
           array_agg(b.admission ORDER BY b.ord), array_agg(to_jsonb(b.cancelled_runs) ORDER BY b.ord)
      INTO v_ords, v_runs, v_status, v_created, v_admits, v_cancels
      FROM queue.workflow_start_batch(p_name, p_items, p_max_retention_days) b;

    -- The first messages to lease: of runs created here, in item order.
    SELECT count(*) FILTER (WHERE u.made),
           array_agg(u.run ORDER BY u.n) FILTER (WHERE u.take),
           array_agg(u.msg ORDER BY u.n) FILTER (WHERE u.take)
      INTO v_made, v_take_runs, v_take
      FROM (SELECT c.made, c.run, r.current_msg_id AS msg, c.n,
                   c.made AND r.workflow_version = ANY (p_versions) AND r.concurrency_key IS NULL
                     AND count(*) FILTER (WHERE c.made AND r.workflow_version = ANY (p_versions) AND r.concurrency_key IS NULL)
                           OVER (ORDER BY c.n) <= p_take AS take
              FROM unnest(v_runs, v_created) WITH ORDINALITY c(run, made, n)
              JOIN queue.workflow_run r ON r.run_id = c.run) u;

    IF v_take IS NOT NULL THEN
        -- The rows were written by this transaction, so nobody else can hold them.
        EXECUTE queue.prepared_sql('wf_lease_new_' || v_queue, 'q_' || v_queue, $q$
            WITH l AS (
                UPDATE queue.%1$I q
                   SET vt = $2 + make_interval(secs => $3), read_ct = q.read_ct + 1
                 WHERE q.msg_id = ANY ($1) AND CASE WHEN q.head THEN q.vt <= $2 ELSE false END
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
               r.started_at, r.trace_context, u.adm,
               CASE WHEN u.cancels IS NOT NULL
                    THEN ARRAY(SELECT jsonb_array_elements_text(u.cancels)::bigint) END
          FROM unnest(v_ords, v_runs, v_status, v_created, v_admits, v_cancels) u(o, run, st, made, adm, cancels)
          LEFT JOIN (unnest(v_take_runs, v_take) t(run, msg)
                     JOIN unnest(v_msgs, v_cts, v_vts, v_reasons) l(msg, ct, vt, reason) ON l.msg = t.msg
                     JOIN queue.workflow_run r ON r.run_id = t.run)
            ON t.run = u.run
         ORDER BY u.o;
END $$;
