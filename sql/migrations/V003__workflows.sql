-- Durable workflows on the queue: a run is a FIFO message group (group id =
-- run id) on queue __wf_<name>; each step boundary is a message, each sleep
-- and wait timeout a delayed message, and the journal holds step results.
--
-- Leases: a task's receipt is its message's visibility time in epoch
-- microseconds. Every write a worker makes names the receipt it holds; a
-- worker whose lease ran out and was handed to another gets 'stale' and
-- changes nothing, so each step is journaled exactly once.

CREATE TYPE queue.workflow_status AS ENUM ('running', 'completed', 'failed', 'cancelled');

CREATE TABLE queue.workflow_run (
    run_id            bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    workflow_name     text NOT NULL CHECK (workflow_name ~ '^[a-z0-9_][a-z0-9_-]{0,42}$'),
    workflow_version  int NOT NULL CHECK (workflow_version >= 1),
    status            queue.workflow_status NOT NULL DEFAULT 'running',
    input             jsonb,
    output            jsonb,
    error             jsonb,
    idempotency_key   text CHECK (length(idempotency_key) BETWEEN 1 AND 255),
    current_msg_id    bigint,
    retention_days    int NOT NULL CHECK (retention_days BETWEEN 1 AND 36500),
    -- The wait a run is suspended in (waitForEvent), if any.
    wait_step         text,
    wait_event        text,
    wait_match        jsonb,
    wait_since        timestamptz,
    -- W3C trace of the run: "<trace id>-<run span id>-<parent span id>"; steps are its children.
    trace_context     text CHECK (length(trace_context) <= 128),
    started_at        timestamptz NOT NULL DEFAULT now(),
    completed_at      timestamptz,
    UNIQUE (workflow_name, idempotency_key),
    CHECK ((status = 'running') = (completed_at IS NULL)),
    CHECK (status = 'running' OR (current_msg_id IS NULL AND wait_step IS NULL)),
    CHECK (status <> 'failed' OR error IS NOT NULL),
    CHECK (status <> 'completed' OR error IS NULL),
    CHECK ((wait_step IS NULL) = (wait_event IS NULL))
);

-- The sweeper finds terminal runs by completed_at.
CREATE INDEX workflow_run_retention_idx ON queue.workflow_run (completed_at) WHERE status <> 'running';
-- Listing, newest first, with or without a status filter.
CREATE INDEX workflow_run_listing_idx ON queue.workflow_run (workflow_name, run_id DESC);
CREATE INDEX workflow_run_status_idx ON queue.workflow_run (workflow_name, status, run_id DESC);

-- The journal: one row per finished step; present means "do not run again".
CREATE TABLE queue.workflow_step (
    run_id        bigint NOT NULL REFERENCES queue.workflow_run (run_id) ON DELETE CASCADE,
    step_name     text NOT NULL CHECK (octet_length(step_name) BETWEEN 1 AND 256),
    seq           int NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('run', 'sleep', 'wait')),
    output        jsonb,
    error         jsonb,
    timed_out     boolean NOT NULL DEFAULT false,
    attempts      int NOT NULL DEFAULT 1,
    started_at    timestamptz NOT NULL,
    completed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, step_name)
);

-- The versions workers have said they serve, learned from their polls.
CREATE TABLE queue.workflow_version (
    workflow_name  text NOT NULL,
    version        int NOT NULL CHECK (version >= 1),
    last_seen_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_name, version)
);

-- Raises 22023 unless p_name is a valid workflow name (its queue __wf_<name> fits 48).
CREATE FUNCTION queue.check_workflow_name(p_name text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_name IS NULL OR p_name !~ '^[a-z0-9_][a-z0-9_-]{0,42}$' THEN
        RAISE EXCEPTION 'workflow name "%" must be 1 to 43 characters of a-z, 0-9, "_" and "-", not starting with "-"',
            left(coalesce(p_name, ''), 64) USING ERRCODE = '22023';
    END IF;
END $$;

-- Raises 22023 unless p_step is a valid step name.
CREATE FUNCTION queue.check_step_name(p_step text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_step IS NULL OR p_step !~ '^[a-zA-Z0-9._-]{1,128}$' THEN
        RAISE EXCEPTION 'step name "%" must be 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-"',
            left(coalesce(p_step, ''), 140) USING ERRCODE = '22023';
    END IF;
END $$;

-- A lease receipt: the message's visibility time in epoch microseconds.
CREATE FUNCTION queue.receipt_of(p_vt timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT (extract(epoch FROM p_vt) * 1000000)::bigint;
$$;

-- Records the versions a worker serves (called at most about once a minute per worker).
CREATE FUNCTION queue.workflow_register_versions(p_name text, p_versions int[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    INSERT INTO queue.workflow_version (workflow_name, version)
    SELECT p_name, v FROM unnest(p_versions) v WHERE v >= 1
    ON CONFLICT (workflow_name, version) DO UPDATE SET last_seen_at = now();
END $$;

-- Starts a run: creates queue __wf_<name> on first use, inserts the run and
-- sends its first message. The same (name, idempotency key) returns the
-- existing run and sends nothing, also under concurrent starts.
-- Version null means the latest version any worker registered (1 if none).
CREATE FUNCTION queue.workflow_start(
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
END $$;

-- A run's journal as a JSON array in step order.
CREATE FUNCTION queue.workflow_journal(p_run_id bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'name', s.step_name, 'kind', s.kind, 'output', s.output, 'error', s.error,
               'timedOut', s.timed_out, 'attempts', s.attempts,
               'startedAt', s.started_at, 'completedAt', s.completed_at) ORDER BY s.seq), '[]'::jsonb)
      FROM queue.workflow_step s WHERE s.run_id = p_run_id;
$$;

-- Hands out up to p_qty due tasks of the given versions, leased for
-- p_lease seconds, each with its run's input and journal. A due wait
-- timeout is journaled here (timed_out) unless a signal won the race.
-- Messages of runs that are no longer running are dropped.
CREATE FUNCTION queue.workflow_poll(p_name text, p_versions int[], p_qty int, p_lease int)
RETURNS TABLE (
    run_id      bigint,
    msg_id      bigint,
    receipt     bigint,
    attempt     int,
    version     int,
    reason      text,
    input       jsonb,
    journal     jsonb,
    started_at  timestamptz,
    trace_context text
)
LANGUAGE plpgsql AS $$
DECLARE
    v_queue text := '__wf_' || p_name;
    v       int;
    m       queue.message;
    r       queue.workflow_run;
    n       int := 0;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    PERFORM queue.check_range('max', p_qty, 1, 100);
    IF p_versions IS NULL OR cardinality(p_versions) = 0 THEN
        RAISE EXCEPTION 'versions must name at least one version' USING ERRCODE = '22023';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM queue.queue_meta WHERE queue_name = v_queue) THEN
        RETURN;
    END IF;
    FOREACH v IN ARRAY p_versions LOOP
        EXIT WHEN n >= p_qty;
        FOR m IN SELECT * FROM queue.receive(v_queue, p_qty - n, p_lease, jsonb_build_object('v', v)) LOOP
            SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = m.group_id::bigint;
            IF NOT FOUND OR r.status <> 'running' OR r.current_msg_id IS DISTINCT FROM m.msg_id THEN
                PERFORM queue.delete(v_queue, m.msg_id);
                CONTINUE;
            END IF;
            IF m.body ->> 'reason' = 'timeout' THEN
                -- A signal for this wait may be deciding right now: it holds the run
                -- and will delete this message, so step aside instead of waiting.
                SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = r.run_id FOR UPDATE SKIP LOCKED;
                IF NOT FOUND THEN
                    PERFORM queue.change_visibility(v_queue, m.msg_id, 1);
                    CONTINUE;
                END IF;
                IF r.status <> 'running' OR r.current_msg_id IS DISTINCT FROM m.msg_id THEN
                    PERFORM queue.delete(v_queue, m.msg_id);
                    CONTINUE;
                END IF;
                IF r.wait_step = m.body ->> 'step' THEN
                    INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, timed_out, started_at)
                    VALUES (r.run_id, r.wait_step,
                            (SELECT coalesce(max(s.seq), 0) + 1 FROM queue.workflow_step s WHERE s.run_id = r.run_id),
                            'wait', true, r.wait_since)
                    ON CONFLICT DO NOTHING;
                    UPDATE queue.workflow_run wr
                       SET wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL
                     WHERE wr.run_id = r.run_id;
                END IF;
            END IF;
            n := n + 1;
            run_id := r.run_id;
            msg_id := m.msg_id;
            receipt := queue.receipt_of(m.vt);
            attempt := m.read_ct;
            version := r.workflow_version;
            reason := m.body ->> 'reason';
            input := r.input;
            journal := queue.workflow_journal(r.run_id);
            started_at := r.started_at;
            trace_context := r.trace_context;
            RETURN NEXT;
        END LOOP;
    END LOOP;
END $$;

-- Locks a running run's current message if p_receipt still holds its lease.
-- Returns the run locked FOR UPDATE, or raises P0002 when the run is unknown.
CREATE FUNCTION queue.workflow_lock(p_run_id bigint) RETURNS queue.workflow_run
LANGUAGE plpgsql AS $$
DECLARE
    r queue.workflow_run;
BEGIN
    SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = p_run_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow run % does not exist', p_run_id USING ERRCODE = 'P0002';
    END IF;
    RETURN r;
END $$;

-- Whether p_receipt is the live lease on message p_msg_id of the run's queue.
CREATE FUNCTION queue.workflow_holds_lease(p_queue text, p_msg_id bigint, p_receipt bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_vt timestamptz;
BEGIN
    EXECUTE format('SELECT vt FROM queue.%I WHERE msg_id = $1 FOR UPDATE', 'q_' || p_queue)
        INTO v_vt USING p_msg_id;
    RETURN v_vt IS NOT NULL AND queue.receipt_of(v_vt) = p_receipt;
END $$;

-- The atomic step transition, in one transaction:
--   1. journal the step (p_step_name; nothing when null), ON CONFLICT DO NOTHING;
--   2. continue: p_next {"reason", "delayMs", "inline", "wait": {"step","event","match"}}
--      sends the next message (or, inline, keeps the lease on the current one);
--   3. or finish: p_next null ends the run with p_result {"status","output"|"error"};
--   4. ack the message the worker held.
-- Outcomes: 'ok'; 'duplicate' (step already journaled: only acks); 'not_running'
-- (cancelled or finished: only acks); 'stale' (the lease was lost: nothing changes).
CREATE FUNCTION queue.workflow_complete_step(
    p_run_id bigint,
    p_msg_id bigint,
    p_receipt bigint,
    p_step_name text,
    p_step_kind text,
    p_output jsonb,
    p_error jsonb,
    p_started_at timestamptz,
    p_next jsonb,
    p_result jsonb,
    p_lease int DEFAULT 60
) RETURNS TABLE (outcome text, next_msg_id bigint, next_receipt bigint)
LANGUAGE plpgsql AS $$
DECLARE
    r         queue.workflow_run := queue.workflow_lock(p_run_id);
    v_queue   text := '__wf_' || r.workflow_name;
    v_delay   bigint;
    v_msg     bigint;
    v_vt      timestamptz;
    v_wait    jsonb;
    v_status  text;
BEGIN
    IF r.status <> 'running' THEN
        PERFORM queue.delete(v_queue, p_msg_id);
        RETURN QUERY SELECT 'not_running'::text, NULL::bigint, NULL::bigint;
        RETURN;
    END IF;
    IF NOT queue.workflow_holds_lease(v_queue, p_msg_id, p_receipt) THEN
        RETURN QUERY SELECT 'stale'::text, NULL::bigint, NULL::bigint;
        RETURN;
    END IF;
    IF p_next IS NULL AND (p_result IS NULL OR p_result ->> 'status' NOT IN ('completed', 'failed')) THEN
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
                p_step_kind, p_output, p_error,
                greatest(coalesce(queue.read_ct(v_queue, p_msg_id), 1), 1),
                coalesce(p_started_at, clock_timestamp()))
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            PERFORM queue.delete(v_queue, p_msg_id);
            RETURN QUERY SELECT 'duplicate'::text, NULL::bigint, NULL::bigint;
            RETURN;
        END IF;
    END IF;

    IF p_next IS NULL THEN
        v_status := p_result ->> 'status';
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
         WHERE wr.run_id = p_run_id;
        PERFORM queue.delete(v_queue, p_msg_id);
        RETURN QUERY SELECT 'ok'::text, NULL::bigint, NULL::bigint;
        RETURN;
    END IF;

    v_delay := coalesce((p_next ->> 'delayMs')::bigint, 0);
    PERFORM queue.check_range('delayMs', v_delay, 0, 31536000000);
    v_wait := nullif(p_next -> 'wait', 'null'::jsonb);
    IF coalesce((p_next ->> 'inline')::boolean, false) THEN
        IF v_delay <> 0 OR v_wait IS NOT NULL THEN
            RAISE EXCEPTION 'only an immediate continuation can be inline' USING ERRCODE = '22023';
        END IF;
        -- Keep the lease: the same message carries the run on. read_ct restarts
        -- at 1 so the next step's attempt count starts afresh.
        v_vt := clock_timestamp() + make_interval(secs => p_lease);
        EXECUTE format('UPDATE queue.%I SET vt = $2, read_ct = 1, body = body || $3 WHERE msg_id = $1', 'q_' || v_queue)
            USING p_msg_id, v_vt, jsonb_build_object('reason', 'resume');
        RETURN QUERY SELECT 'ok'::text, p_msg_id, queue.receipt_of(v_vt);
        RETURN;
    END IF;

    IF v_wait IS NOT NULL THEN
        PERFORM queue.check_step_name(v_wait ->> 'step');
        IF coalesce(v_wait ->> 'event', '') = '' OR length(v_wait ->> 'event') > 128 THEN
            RAISE EXCEPTION 'a wait needs an event name of 1 to 128 characters' USING ERRCODE = '22023';
        END IF;
        IF v_wait -> 'match' IS NOT NULL AND jsonb_typeof(v_wait -> 'match') <> 'object' THEN
            RAISE EXCEPTION 'a wait''s match must be a JSON object' USING ERRCODE = '22023';
        END IF;
    END IF;
    -- Send before the ack: the new message waits behind the held one in the
    -- run's group and is promoted by the delete, all at commit.
    v_msg := queue.send(v_queue,
                        jsonb_build_object('v', r.workflow_version,
                                           'reason', CASE WHEN v_wait IS NOT NULL THEN 'timeout'
                                                          ELSE coalesce(p_next ->> 'reason', 'resume') END)
                          || CASE WHEN v_wait IS NOT NULL THEN jsonb_build_object('step', v_wait ->> 'step')
                                  ELSE '{}'::jsonb END,
                        NULL, 0, p_run_id::text, NULL,
                        clock_timestamp() + make_interval(secs => v_delay / 1000.0));
    UPDATE queue.workflow_run wr
       SET current_msg_id = v_msg,
           wait_step = v_wait ->> 'step',
           wait_event = v_wait ->> 'event',
           wait_match = coalesce(v_wait -> 'match', CASE WHEN v_wait IS NOT NULL THEN '{}'::jsonb END),
           wait_since = CASE WHEN v_wait IS NOT NULL THEN clock_timestamp() END
     WHERE wr.run_id = p_run_id;
    PERFORM queue.delete(v_queue, p_msg_id);
    RETURN QUERY SELECT 'ok'::text, v_msg, NULL::bigint;
END $$;

-- Retry the current step later: the held message reappears after p_delay
-- seconds and read_ct counts the attempt. 'stale' when the lease was lost.
CREATE FUNCTION queue.workflow_retry(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_delay_ms bigint)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r       queue.workflow_run := queue.workflow_lock(p_run_id);
    v_queue text := '__wf_' || r.workflow_name;
BEGIN
    PERFORM queue.check_range('delay (milliseconds)', p_delay_ms, 0, 31536000000);
    IF r.status <> 'running' THEN
        PERFORM queue.delete(v_queue, p_msg_id);
        RETURN 'not_running';
    END IF;
    IF NOT queue.workflow_holds_lease(v_queue, p_msg_id, p_receipt) THEN
        RETURN 'stale';
    END IF;
    EXECUTE format('UPDATE queue.%I SET vt = clock_timestamp() + $2 WHERE msg_id = $1', 'q_' || v_queue)
        USING p_msg_id, make_interval(secs => p_delay_ms / 1000.0);
    RETURN 'ok';
END $$;

-- Extends the lease of a task whose step is still running; returns the new
-- receipt, or null when the lease was already lost.
CREATE FUNCTION queue.workflow_extend_lease(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_lease int)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    r       queue.workflow_run := queue.workflow_lock(p_run_id);
    v_queue text := '__wf_' || r.workflow_name;
    v_vt    timestamptz;
BEGIN
    PERFORM queue.check_range('leaseSeconds', p_lease, 1, 43200);
    IF r.status <> 'running' OR NOT queue.workflow_holds_lease(v_queue, p_msg_id, p_receipt) THEN
        RETURN NULL;
    END IF;
    v_vt := clock_timestamp() + make_interval(secs => p_lease);
    EXECUTE format('UPDATE queue.%I SET vt = $2 WHERE msg_id = $1', 'q_' || v_queue) USING p_msg_id, v_vt;
    RETURN queue.receipt_of(v_vt);
END $$;

-- Delivers a signal to a run waiting for p_event whose match the payload
-- contains: deletes the wait's timeout message, journals the payload as the
-- wait step's output and sends the continuation, in one transaction.
-- Otherwise reports why not: 'no such run', 'not running', 'not waiting for
-- that event', 'payload does not match'.
CREATE FUNCTION queue.workflow_signal(p_run_id bigint, p_event text, p_payload jsonb)
RETURNS TABLE (delivered boolean, reason text, workflow_name text)
LANGUAGE plpgsql AS $$
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
    v_msg := queue.send(v_queue, jsonb_build_object('v', r.workflow_version, 'reason', 'signal'), NULL, 0,
                        r.run_id::text);
    PERFORM queue.delete(v_queue, r.current_msg_id);
    UPDATE queue.workflow_run wr
       SET current_msg_id = v_msg, wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL
     WHERE wr.run_id = r.run_id;
    RETURN QUERY SELECT true, 'delivered'::text, r.workflow_name;
END $$;

-- Cancels a running run: deletes its in-flight message and marks it
-- cancelled. A worker inside a step finds out on its next write
-- ('not_running'). Returns whether it was cancelled now, and the status.
CREATE FUNCTION queue.workflow_cancel(p_run_id bigint)
RETURNS TABLE (cancelled boolean, status queue.workflow_status, workflow_name text)
LANGUAGE plpgsql AS $$
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

-- Runs of a workflow, newest first, after cursor p_before (a run id),
-- filtered by status, start time and input containment.
CREATE FUNCTION queue.workflow_list(
    p_name text,
    p_status queue.workflow_status DEFAULT NULL,
    p_since timestamptz DEFAULT NULL,
    p_until timestamptz DEFAULT NULL,
    p_input jsonb DEFAULT NULL,
    p_before bigint DEFAULT NULL,
    p_limit int DEFAULT 50
) RETURNS SETOF queue.workflow_run
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    RETURN QUERY
        SELECT * FROM queue.workflow_run r
         WHERE r.workflow_name = p_name
           AND (p_status IS NULL OR r.status = p_status)
           AND (p_since IS NULL OR r.started_at >= p_since)
           AND (p_until IS NULL OR r.started_at < p_until)
           AND (p_input IS NULL OR r.input @> p_input)
           AND (p_before IS NULL OR r.run_id < p_before)
         ORDER BY r.run_id DESC
         LIMIT p_limit;
END $$;

-- Every workflow with its run counts per status.
CREATE FUNCTION queue.workflow_summary()
RETURNS TABLE (workflow_name text, running bigint, completed bigint, failed bigint, cancelled bigint)
LANGUAGE sql STABLE AS $$
    SELECT r.workflow_name,
           count(*) FILTER (WHERE r.status = 'running'),
           count(*) FILTER (WHERE r.status = 'completed'),
           count(*) FILTER (WHERE r.status = 'failed'),
           count(*) FILTER (WHERE r.status = 'cancelled')
      FROM queue.workflow_run r
     GROUP BY r.workflow_name
     ORDER BY r.workflow_name;
$$;
