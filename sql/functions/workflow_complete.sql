-- Completing steps: the journal row, the run's next message or its end, and the ack, in one
-- transaction.

-- Checks a step before it is journaled: its name and kind, and its change of the run's state
-- (22023 naming the field).
CREATE OR REPLACE FUNCTION queue.check_step(p_run_id bigint, p_step_name text, p_step_kind text, p_state jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queue.check_step_name(p_step_name);
    PERFORM queue.check_step_kind(p_step_kind);
    IF p_state IS NOT NULL THEN
        PERFORM queue.check_run_state('step.state', p_run_id, p_state);
    END IF;
END $$;

-- Journals a step as its run's next row, with its attempts, its times (now when not given) and its
-- change of the run's state; false when the run has a row of that name already, and nothing was
-- written (a duplicate).
CREATE OR REPLACE FUNCTION queue.workflow_journal_step(p_run_id bigint, p_step_name text, p_step_kind text, p_output jsonb, p_error jsonb, p_attempts integer, p_started_at timestamp with time zone, p_completed_at timestamp with time zone, p_state jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, error, attempts, started_at,
                                     completed_at, state, state_version)
    VALUES (p_run_id, p_step_name,
            (SELECT coalesce(max(s.seq), 0) + 1 FROM queue.workflow_step s WHERE s.run_id = p_run_id),
            p_step_kind, p_output, p_error, greatest(coalesce(p_attempts, 1), 1),
            coalesce(p_started_at, now()), coalesce(p_completed_at, now()), p_state,
            CASE WHEN p_state IS NOT NULL THEN nextval('queue.workflow_state_version_seq') END)
    ON CONFLICT DO NOTHING;
    RETURN FOUND;
END $$;

-- Ends a run with its result ({"status": "completed", "output": ...} or {"status": "failed",
-- "error": ...}): no message and no wait any more. Answers the run's row as it is then.
CREATE OR REPLACE FUNCTION queue.workflow_end(p_run_id bigint, p_result jsonb)
 RETURNS queue.workflow_run
 LANGUAGE plpgsql
AS $$
DECLARE
    r        queue.workflow_run;
    v_status text := p_result ->> 'status';
BEGIN
    IF v_status IS NULL OR v_status NOT IN ('completed', 'failed') THEN
        RAISE EXCEPTION 'a completion needs next or a result with status completed or failed'
            USING ERRCODE = '22023';
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
    RETURNING wr.* INTO r;
    RETURN r;
END $$;

-- The fast path of workflow_complete_step for a step whose run goes on at once on the same message;
-- no row when the general path must answer.
CREATE OR REPLACE FUNCTION queue.workflow_continue_step(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_step_name text, p_step_kind text, p_output jsonb, p_error jsonb, p_started_at timestamp with time zone, p_next jsonb, p_lease integer, p_state jsonb DEFAULT NULL)
 RETURNS TABLE(outcome text, next_msg_id bigint, next_receipt bigint)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_name    text;
    v_status  queue.workflow_status;
    v_current bigint;
    v_queue   text;
    v_delay   bigint;
    v_now     timestamptz := clock_timestamp();
    v_ct      int;
    v_vt      timestamptz;
    v_lease   int := coalesce(p_lease, 60);
    v_paused  timestamptz;
BEGIN
    SELECT wr.workflow_name, wr.status, wr.current_msg_id, wr.paused_at INTO v_name, v_status, v_current, v_paused
      FROM queue.workflow_run wr WHERE wr.run_id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow run % does not exist', p_run_id USING ERRCODE = 'P0002';
    END IF;
    IF v_status <> 'running' THEN
        RETURN; -- no row: the caller takes the general path
    END IF;
    -- A paused run or workflow goes no further: the general path hands the run back.
    IF v_paused IS NOT NULL OR EXISTS (SELECT 1 FROM queue.workflow_pause wp WHERE wp.workflow_name = v_name) THEN
        RETURN;
    END IF;
    IF v_current IS DISTINCT FROM p_msg_id THEN
        RETURN QUERY SELECT 'stale'::text, NULL::bigint, NULL::bigint;
        RETURN;
    END IF;
    IF p_step_name IS NOT NULL THEN
        PERFORM queue.check_step_name(p_step_name);
        PERFORM queue.check_step_kind(p_step_kind);
    END IF;
    v_delay := coalesce((p_next ->> 'delayMs')::bigint, 0);
    PERFORM queue.check_range('delayMs', v_delay, 0, 31536000000);
    IF v_delay <> 0 OR nullif(p_next -> 'wait', 'null'::jsonb) IS NOT NULL THEN
        RAISE EXCEPTION 'only an immediate continuation can be inline' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('lease', v_lease, 1, 43200);

    -- The message, where the receipt still holds its lease: locked, and
    -- changed only where it must be (as in workflow_complete_batch).
    v_queue := '__wf_' || v_name;
    EXECUTE queue.prepared_sql('wf_go_' || v_queue, 'q_' || v_queue, $q$
        WITH o AS (
            SELECT q.read_ct, q.vt, q.vt < $3 + make_interval(secs => $4 * 2 / 3.0) AS renew,
                   q.read_ct <> 1 OR q.body ->> 'reason' IS DISTINCT FROM 'resume' AS touched
              FROM queue.%1$I q
             WHERE q.msg_id = $1 AND queue.receipt_of(q.vt) = $2
               FOR UPDATE),
             u AS (
            UPDATE queue.%1$I q
               SET vt = CASE WHEN o.renew THEN $3 + make_interval(secs => $4) ELSE q.vt END,
                   read_ct = 1,
                   body = CASE WHEN q.body ->> 'reason' = 'resume' THEN q.body
                               ELSE q.body || '{"reason": "resume"}'::jsonb END
              FROM o
             WHERE q.msg_id = $1 AND (o.renew OR o.touched)
            RETURNING q.vt)
        SELECT o.read_ct, coalesce((SELECT u.vt FROM u), o.vt) FROM o$q$,
        'bigint, bigint, timestamptz, int',
        format('%L, %L, %L, %L', p_msg_id, p_receipt, v_now, v_lease))
        INTO v_ct, v_vt;
    IF v_vt IS NULL THEN
        RETURN QUERY SELECT 'stale'::text, NULL::bigint, NULL::bigint;
        RETURN;
    END IF;

    IF p_step_name IS NOT NULL THEN
        IF p_state IS NOT NULL THEN
            PERFORM queue.check_run_state('step.state', p_run_id, p_state);
        END IF;
        IF NOT queue.workflow_journal_step(p_run_id, p_step_name, p_step_kind, p_output, p_error, v_ct,
                                           p_started_at, NULL, p_state) THEN
            RETURN QUERY SELECT 'duplicate'::text, NULL::bigint, NULL::bigint;
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT 'ok'::text, p_msg_id, queue.receipt_of(v_vt);
END $$;

-- Journals a step exactly once and sends the run on (continue inline, sleep, wait, or end) in one
-- transaction; a duplicate changes nothing (the run keeps its message and lease). An inline
-- continuation of a paused run or workflow hands the run back (outcome paused).
CREATE OR REPLACE FUNCTION queue.workflow_complete_step(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_step_name text, p_step_kind text, p_output jsonb, p_error jsonb, p_started_at timestamp with time zone, p_next jsonb, p_result jsonb, p_lease integer DEFAULT 60, p_state jsonb DEFAULT NULL)
 RETURNS TABLE(outcome text, next_msg_id bigint, next_receipt bigint)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r         queue.workflow_run;
    v_queue   text;
    v_delay   bigint;
    v_due     timestamptz;
    v_msg     bigint;
    v_vt      timestamptz;
    v_wait    jsonb;
    v_status  text;
BEGIN
    IF coalesce((p_next ->> 'inline')::boolean, false) THEN
        RETURN QUERY SELECT * FROM queue.workflow_continue_step(
            p_run_id, p_msg_id, p_receipt, p_step_name, p_step_kind, p_output, p_error,
            p_started_at, p_next, p_lease, p_state);
        IF FOUND THEN
            RETURN;
        END IF;
    END IF;
    r := queue.workflow_lock(p_run_id);
    v_queue := '__wf_' || r.workflow_name;
    IF r.status <> 'running' THEN
        PERFORM queue.workflow_drop_message(v_queue, p_run_id, p_msg_id);
        RETURN QUERY SELECT 'not_running'::text, NULL::bigint, NULL::bigint;
        RETURN;
    END IF;
    IF r.current_msg_id IS DISTINCT FROM p_msg_id
       OR NOT queue.workflow_holds_lease(v_queue, p_msg_id, p_receipt) THEN
        RETURN QUERY SELECT 'stale'::text, NULL::bigint, NULL::bigint;
        RETURN;
    END IF;
    IF p_next IS NULL AND (p_result IS NULL OR p_result ->> 'status' NOT IN ('completed', 'failed')) THEN
        RAISE EXCEPTION 'a completion needs next or a result with status completed or failed'
            USING ERRCODE = '22023';
    END IF;
    v_delay := coalesce((p_next ->> 'delayMs')::bigint, 0);
    PERFORM queue.check_range('delayMs', v_delay, 0, 31536000000);
    -- When the next message is due: the end of a sleep (or of a wait's timeout).
    v_due := clock_timestamp() + make_interval(secs => v_delay / 1000.0);

    IF p_step_name IS NOT NULL THEN
        PERFORM queue.check_step(p_run_id, p_step_name, p_step_kind, p_state);
        -- A step with no start of its own starts with this transaction, when it completes; a
        -- sleep completes when it ends, so its row shows its duration.
        IF NOT queue.workflow_journal_step(
                   p_run_id, p_step_name, p_step_kind, p_output, p_error,
                   queue.read_ct(v_queue, p_msg_id), p_started_at,
                   CASE WHEN p_step_kind = 'sleep' AND p_next IS NOT NULL THEN v_due END, p_state) THEN
            -- Nothing changed yet: the run keeps its message, still leased to this receipt, and
            -- goes on from its journal (its holder lets the lease run out). An ack here would
            -- leave current_msg_id naming a message gone, and the run handed out never again.
            RETURN QUERY SELECT 'duplicate'::text, NULL::bigint, NULL::bigint;
            RETURN;
        END IF;
    END IF;

    IF p_next IS NULL THEN
        PERFORM queue.workflow_end(p_run_id, p_result);
        PERFORM queue.delete(v_queue, p_msg_id);
        RETURN QUERY SELECT 'ok'::text, NULL::bigint, NULL::bigint;
        RETURN;
    END IF;

    v_wait := nullif(p_next -> 'wait', 'null'::jsonb);
    -- An inline continuation of a paused run or workflow is handed back instead: its next task
    -- is due now and handed out after the resume; the worker is told so (paused).
    IF coalesce((p_next ->> 'inline')::boolean, false)
       AND (r.paused_at IS NOT NULL
            OR EXISTS (SELECT 1 FROM queue.workflow_pause wp WHERE wp.workflow_name = r.workflow_name)) THEN
        v_status := 'paused';
    END IF;
    IF v_wait IS NOT NULL AND nullif(p_next -> 'delayMs', 'null'::jsonb) IS NULL THEN
        -- A wait with no timeout has no message until something it waits for comes.
        v_msg := NULL;
    ELSE
        -- Send before the ack: the new message waits behind the held one in the
        -- run's group and is promoted by the delete, all at commit.
        v_msg := queue.enqueue(v_queue,
                            jsonb_build_object('v', queue.task_v(r.workflow_version, r.sticky_worker),
                                               'reason', CASE WHEN v_wait IS NOT NULL THEN 'timeout'
                                                              ELSE coalesce(p_next ->> 'reason', 'resume') END)
                              || CASE WHEN v_wait IS NOT NULL THEN jsonb_build_object('step', v_wait ->> 'step')
                                      ELSE '{}'::jsonb END,
                            NULL, 0, p_run_id::text, NULL,
                            v_due);
    END IF;
    IF v_wait IS NOT NULL THEN
        -- Signals already in the inbox may satisfy the wait at once.
        PERFORM queue.workflow_wait_begin(p_run_id, v_wait, v_msg);
    ELSE
        UPDATE queue.workflow_run wr SET current_msg_id = v_msg WHERE wr.run_id = p_run_id;
    END IF;
    PERFORM queue.delete(v_queue, p_msg_id);
    RETURN QUERY SELECT coalesce(v_status, 'ok'), wr.current_msg_id, NULL::bigint
                   FROM queue.workflow_run wr WHERE wr.run_id = p_run_id;
END $$;

-- Journals a run's last step and ends the run with its result in one transaction; falls back to
-- workflow_complete_step when not the lease holder.
CREATE OR REPLACE FUNCTION queue.workflow_complete_ended(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_step_name text, p_step_kind text, p_output jsonb, p_error jsonb, p_started_at timestamp with time zone, p_result jsonb, p_lease integer DEFAULT 60, p_state jsonb DEFAULT NULL)
 RETURNS TABLE(outcome text, version integer, started_at timestamp with time zone, completed_at timestamp with time zone, trace_context text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r        queue.workflow_run;
    v_queue  text;
    v_ct     int;
    v_next   timestamptz;
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
                                            p_output, p_error, p_started_at, NULL, p_result, p_lease,
                                            p_state) c;
        RETURN NEXT;
        RETURN;
    END IF;
    IF v_status IS NULL OR v_status NOT IN ('completed', 'failed') THEN
        RAISE EXCEPTION 'a completion needs next or a result with status completed or failed'
            USING ERRCODE = '22023';
    END IF;
    IF p_step_name IS NOT NULL THEN
        PERFORM queue.check_step(p_run_id, p_step_name, p_step_kind, p_state);
        IF NOT queue.workflow_journal_step(p_run_id, p_step_name, p_step_kind, p_output, p_error, v_ct,
                                           p_started_at, NULL, p_state) THEN
            -- The run keeps its message, as in workflow_complete_step.
            outcome := 'duplicate';
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;
    r := queue.workflow_end(p_run_id, p_result);
    version := r.workflow_version;
    started_at := r.started_at;
    completed_at := r.completed_at;
    trace_context := r.trace_context;
    -- The run's message goes; the group's next message, if any, is its head.
    PERFORM queue.lock_group(v_queue, p_run_id::text);
    EXECUTE queue.prepared_sql('wf_end_drop_' || v_queue, 'q_' || v_queue, $q$
        WITH d AS (
            DELETE FROM queue.%1$I WHERE msg_id = $1 RETURNING head),
             p AS (
            UPDATE queue.%1$I q SET head = true
             WHERE q.msg_id = (SELECT n.msg_id FROM queue.%1$I n
                                WHERE n.group_id = $2 AND n.msg_id <> $1
                                ORDER BY n.msg_id LIMIT 1)
               AND NOT q.head AND (SELECT d.head FROM d)
            RETURNING q.vt)
        SELECT p.vt FROM p$q$,
        'bigint, text',
        format('%L, %L', p_msg_id, p_run_id::text))
        INTO v_next;
    IF v_next IS NOT NULL AND v_next <= clock_timestamp() THEN
        PERFORM queue.notify_once(v_queue);
    END IF;
    outcome := 'ok';
    RETURN NEXT;
END $$;

-- Completes a batch of steps of many runs in one transaction; each item answered as
-- workflow_complete_step would.
CREATE OR REPLACE FUNCTION queue.workflow_complete_batch(p_name text, p_items jsonb)
 RETURNS TABLE(ord integer, outcome text, next_msg_id bigint, next_receipt bigint, version integer, started_at timestamp with time zone, completed_at timestamp with time zone, trace_context text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_tbl       text := 'q___wf_' || p_name;
    v_now       timestamptz := clock_timestamp();
    v_items     queue.workflow_completion[];
    v_run_ids   bigint[];
    v_repeats   boolean;
    v_bad       boolean;
    v_in_ids    bigint[];
    v_in_rcpts  bigint[];
    v_in_leases int[];
    v_fin_ids   bigint[];
    v_fin_rcpts bigint[];
    v_kept      bigint[] := '{}';
    v_kept_vt   timestamptz[] := '{}';
    v_kept_ct   int[] := '{}';
    v_gone      bigint[] := '{}';
    v_gone_ct   int[] := '{}';
    v_groups    text[] := '{}';
    v_finishing boolean;
    v_slow      boolean;
    v_finished  bigint[] := '{}';
    v_ended     timestamptz[] := '{}';
    v_versions  int[] := '{}';
    v_starts    timestamptz[] := '{}';
    v_traces    text[] := '{}';
    v_vts       timestamptz[];
    v_slow_ord  int[] := '{}';
    v_slow_out  text[] := '{}';
    v_slow_msg  bigint[] := '{}';
    v_slow_rc   bigint[] := '{}';
    v_paused    boolean;
    v_state     boolean;
    i           queue.workflow_completion;
    c           record;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    IF p_items IS NULL OR jsonb_typeof(p_items) <> 'array' THEN
        RAISE EXCEPTION 'completions must be a JSON array' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('batch size', jsonb_array_length(p_items), 1, 100);
    IF NOT EXISTS (SELECT 1 FROM queue.queue_meta WHERE queue_name = '__wf_' || p_name) THEN
        RAISE EXCEPTION 'workflow "%" has no runs', p_name USING ERRCODE = 'P0002';
    END IF;
    v_paused := EXISTS (SELECT 1 FROM queue.workflow_pause wp WHERE wp.workflow_name = p_name);

    -- A run that ends here is locked first, runs before messages in id order
    -- as every other writer does. An inline step changes only its message,
    -- and the lease check on that row decides against a concurrent cancel.
    IF p_items @? '$[*] ? (@.result.type() != "null")' THEN
        PERFORM 1 FROM queue.workflow_run wr
         WHERE wr.run_id = ANY (ARRAY(SELECT (e.value ->> 'run_id')::bigint
                                        FROM jsonb_array_elements(p_items) e
                                       WHERE e.value -> 'result' <> 'null'::jsonb))
         ORDER BY wr.run_id
           FOR UPDATE;
    END IF;

    -- The items, their runs (by key alone: a run of another workflow is not
    -- found), each item's class, and what the later steps need of them.
    WITH j AS (
        SELECT j.ord::int AS ord, j.run_id, j.msg_id, j.receipt, j.step_name, j.step_kind, j.output,
               j.error, j.started_at, j.next, j.result, coalesce(j.lease, 60) AS lease, j.state
          FROM ROWS FROM (jsonb_to_recordset(p_items) AS (
                   run_id bigint, msg_id bigint, receipt bigint, step_name text, step_kind text,
                   output jsonb, error jsonb, started_at timestamptz, next jsonb, result jsonb,
                   lease int, state jsonb)) WITH ORDINALITY AS j(
                   run_id, msg_id, receipt, step_name, step_kind, output, error, started_at, next,
                   result, lease, state, ord)),
         r AS (
        SELECT wr.run_id, wr.status, wr.current_msg_id, wr.paused_at
          FROM queue.workflow_run wr
         WHERE wr.run_id = ANY (ARRAY(SELECT j.run_id FROM j)) AND wr.workflow_name = p_name),
         k AS (
        SELECT j.*,
               CASE WHEN r.run_id IS NULL THEN 'not_found'
                    WHEN r.status <> 'running' THEN 'slow'
                    -- A message that is not the run's own holds no lease on it.
                    WHEN r.current_msg_id IS DISTINCT FROM j.msg_id THEN 'stale'
                    -- A paused run or workflow is handed back by the general path.
                    WHEN j.next = '{"inline": true}'::jsonb AND j.result IS NULL
                         AND r.paused_at IS NULL AND NOT v_paused THEN 'inline'
                    -- A step journaled already goes the general way too: a finish acks
                    -- before it journals, and a duplicate must leave the run its message.
                    WHEN j.next IS NULL AND j.result IS NOT NULL
                         AND (j.step_name IS NULL
                              OR NOT EXISTS (SELECT 1 FROM queue.workflow_step s
                                              WHERE s.run_id = j.run_id AND s.step_name = j.step_name))
                         THEN 'finish'
                    ELSE 'slow' END AS cls
          FROM j LEFT JOIN r ON r.run_id = j.run_id)
    SELECT array_agg(ROW(k.ord, k.run_id, k.msg_id, k.receipt, k.step_name, k.step_kind, k.output,
                         k.error, k.started_at, k.next, k.result, k.lease, k.cls, NULL, k.state
                     )::queue.workflow_completion ORDER BY k.ord),
           count(DISTINCT k.run_id) <> count(*) OR count(k.run_id) <> count(*),
           coalesce(bool_or(
               k.msg_id IS NULL OR k.receipt IS NULL OR k.lease NOT BETWEEN 1 AND 43200
               OR (k.cls IN ('inline', 'finish') AND k.step_name IS NOT NULL
                   AND (NOT queue.is_step_name(k.step_name) OR NOT queue.is_step_kind(k.step_kind)))
               OR (k.cls = 'finish'
                   AND (k.result ->> 'status' IS NULL OR k.result ->> 'status' NOT IN ('completed', 'failed')
                        OR (k.result ->> 'status' = 'failed' AND k.result -> 'error' IS NULL)))), false),
           array_agg(k.msg_id) FILTER (WHERE k.cls = 'inline'),
           array_agg(k.receipt) FILTER (WHERE k.cls = 'inline'),
           array_agg(k.lease) FILTER (WHERE k.cls = 'inline'),
           array_agg(k.msg_id) FILTER (WHERE k.cls = 'finish'),
           array_agg(k.receipt) FILTER (WHERE k.cls = 'finish'),
           array_agg(k.run_id),
           bool_or(k.state IS NOT NULL)
      INTO v_items, v_repeats, v_bad, v_in_ids, v_in_rcpts, v_in_leases, v_fin_ids, v_fin_rcpts,
           v_run_ids, v_state
      FROM k;
    IF v_repeats THEN
        RAISE EXCEPTION 'a batch may complete each run at most once' USING ERRCODE = '22023';
    END IF;
    IF v_bad THEN
        RAISE EXCEPTION 'a completion in the batch is malformed' USING ERRCODE = '22023';
    END IF;
    -- State changes are checked only in a batch that has some (slow items check their own).
    IF v_state THEN
        PERFORM queue.check_run_state('state', u.run_id, u.state)
           FROM unnest(v_items) u
          WHERE u.state IS NOT NULL AND u.step_name IS NOT NULL AND u.cls IN ('inline', 'finish');
    END IF;

    -- 1. Inline continuations keep their lease, where the receipt still holds
    -- it: the same message carries the run on. Its row is locked and left as
    -- it is unless something changes: the lease is renewed only once less
    -- than two thirds of it are left (a new vt means new index entries, and
    -- a new receipt), read_ct restarts at 1 (its old value is the step's
    -- attempts) and the reason becomes "resume".
    IF v_in_ids IS NOT NULL THEN
        EXECUTE queue.prepared_sql('wf_hold_' || p_name, v_tbl, $q$
            WITH o AS (
                SELECT q.msg_id, q.read_ct, q.vt, w.lease,
                       q.vt < $4 + make_interval(secs => w.lease * 2 / 3.0) AS renew,
                       q.read_ct <> 1 OR q.body ->> 'reason' IS DISTINCT FROM 'resume' AS touched
                  FROM queue.%1$I q JOIN unnest($1, $2, $3) AS w(msg_id, receipt, lease) ON q.msg_id = w.msg_id
                 WHERE q.msg_id = ANY ($1) AND queue.receipt_of(q.vt) = w.receipt
                 ORDER BY q.msg_id
                   FOR UPDATE OF q),
                 u AS (
                UPDATE queue.%1$I q
                   SET vt = CASE WHEN o.renew THEN $4 + make_interval(secs => o.lease) ELSE q.vt END,
                       read_ct = 1,
                       body = CASE WHEN q.body ->> 'reason' = 'resume' THEN q.body
                                   ELSE q.body || '{"reason": "resume"}'::jsonb END
                  FROM o
                 WHERE q.msg_id = o.msg_id AND (o.renew OR o.touched)
                RETURNING q.msg_id, q.vt)
            SELECT coalesce(array_agg(o.msg_id), '{}'), coalesce(array_agg(coalesce(u.vt, o.vt)), '{}'),
                   coalesce(array_agg(o.read_ct), '{}')
              FROM o LEFT JOIN u ON u.msg_id = o.msg_id$q$,
            'bigint[], bigint[], int[], timestamptz',
            format('%L, %L, %L, %L', v_in_ids, v_in_rcpts, v_in_leases, v_now))
            INTO v_kept, v_kept_vt, v_kept_ct;
    END IF;

    -- 2. The messages of finishing runs are acked, where the receipt still
    -- holds the lease.
    IF v_fin_ids IS NOT NULL THEN
        EXECUTE queue.prepared_sql('wf_ack_' || p_name, v_tbl, $q$
            WITH d AS (
                DELETE FROM queue.%1$I q USING unnest($1, $2) AS w(msg_id, receipt)
                 WHERE q.msg_id = ANY ($1) AND q.msg_id = w.msg_id
                   AND queue.receipt_of(q.vt) = w.receipt
                RETURNING q.msg_id, q.read_ct, q.group_id, q.head)
            SELECT coalesce(array_agg(d.msg_id), '{}'), coalesce(array_agg(d.read_ct), '{}'),
                   coalesce(array_agg(DISTINCT d.group_id) FILTER (WHERE d.head AND d.group_id IS NOT NULL), '{}')
              FROM d$q$,
            'bigint[], bigint[]',
            format('%L, %L', v_fin_ids, v_fin_rcpts))
            INTO v_gone, v_gone_ct, v_groups;
    END IF;

    -- 3. A receipt that no longer holds the lease changed nothing: stale.
    -- The others' steps are journaled; a step journaled already makes its
    -- item a duplicate, which changes nothing else. An inline continuation
    -- keeps its receipt now, so the usual duplicate is the worker's own
    -- retry of a completion whose answer it never got: the message stays
    -- with the run (the worker lets the lease run out and the run is taken
    -- up again from its journal).
    WITH s AS (
        SELECT u.ord, u.run_id, u.msg_id, u.receipt, u.step_name, u.step_kind, u.output, u.error,
               u.started_at, u.next, u.result, u.lease, u.state,
               CASE WHEN u.cls = 'inline' AND NOT (u.msg_id = ANY (v_kept)) THEN 'stale'
                    WHEN u.cls = 'finish' AND NOT (u.msg_id = ANY (v_gone)) THEN 'stale'
                    ELSE u.cls END AS cls,
               CASE u.cls WHEN 'inline' THEN v_kept_ct[array_position(v_kept, u.msg_id)]
                          WHEN 'finish' THEN v_gone_ct[array_position(v_gone, u.msg_id)] END AS read_ct
          FROM unnest(v_items) u),
         ins AS (
        INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, error, attempts, started_at,
                                         state, state_version)
        SELECT s.run_id, s.step_name,
               (SELECT coalesce(max(w.seq), 0) + 1 FROM queue.workflow_step w WHERE w.run_id = s.run_id),
               s.step_kind, s.output, s.error, greatest(coalesce(s.read_ct, 1), 1),
               coalesce(s.started_at, now()), s.state,
               CASE WHEN s.state IS NOT NULL THEN nextval('queue.workflow_state_version_seq') END
          FROM s
         WHERE s.cls IN ('inline', 'finish') AND s.step_name IS NOT NULL
        ON CONFLICT DO NOTHING
        RETURNING workflow_step.run_id),
         f AS (
        SELECT s.*,
               CASE WHEN s.cls IN ('inline', 'finish') AND s.step_name IS NOT NULL AND ins.run_id IS NULL
                    THEN 'duplicate' ELSE s.cls END AS outcome
          FROM s LEFT JOIN ins ON ins.run_id = s.run_id)
    SELECT array_agg(ROW(f.ord, f.run_id, f.msg_id, f.receipt, f.step_name, f.step_kind, f.output,
                         f.error, f.started_at, f.next, f.result, f.lease, f.outcome, f.read_ct,
                         f.state)::queue.workflow_completion ORDER BY f.ord),
           coalesce(bool_or(f.outcome = 'finish'), false),
           coalesce(bool_or(f.outcome = 'slow'), false)
      INTO v_items, v_finishing, v_slow
      FROM f;

    -- 4. Finished runs.
    IF v_finishing THEN
        WITH f AS (
            UPDATE queue.workflow_run wr
               SET status = (u.result ->> 'status')::queue.workflow_status,
                   output = CASE WHEN u.result ->> 'status' = 'completed' THEN u.result -> 'output' END,
                   error = CASE WHEN u.result ->> 'status' = 'failed' THEN u.result -> 'error' END,
                   completed_at = v_now,
                   current_msg_id = NULL,
                   wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL
              FROM unnest(v_items) u
             WHERE u.cls = 'finish' AND wr.run_id = u.run_id AND wr.run_id = ANY (v_run_ids)
            RETURNING wr.run_id, wr.completed_at, wr.workflow_version, wr.started_at, wr.trace_context)
        SELECT array_agg(f.run_id), array_agg(f.completed_at), array_agg(f.workflow_version),
               array_agg(f.started_at), array_agg(f.trace_context)
          INTO v_finished, v_ended, v_versions, v_starts, v_traces FROM f;
    END IF;

    -- 5. A deleted group head lets the next message of its group through
    -- (group locks in order, as everywhere).
    IF cardinality(v_groups) > 0 THEN
        PERFORM queue.lock_group('__wf_' || p_name, g) FROM (SELECT DISTINCT g FROM unnest(v_groups) g) x ORDER BY g;
        EXECUTE queue.prepared_sql('wf_promote_' || p_name, v_tbl, $q$
            WITH p AS (
                UPDATE queue.%1$I q SET head = true
                 WHERE q.msg_id IN (SELECT min(o.msg_id) FROM queue.%1$I o
                                     WHERE o.group_id = ANY ($1) GROUP BY o.group_id)
                   AND NOT q.head
                RETURNING q.vt)
            SELECT coalesce(array_agg(p.vt), '{}') FROM p$q$,
            'text[]', format('%L', v_groups))
            INTO v_vts;
        IF EXISTS (SELECT 1 FROM unnest(v_vts) t WHERE t <= v_now) THEN
            PERFORM queue.notify_once('__wf_' || p_name);
        END IF;
    END IF;

    -- 6. Everything else, one by one.
    IF v_slow THEN
        FOREACH i IN ARRAY v_items LOOP
            IF i.cls = 'slow' THEN
                SELECT * INTO c FROM queue.workflow_complete_step(
                    i.run_id, i.msg_id, i.receipt, i.step_name, i.step_kind, i.output, i.error,
                    i.started_at, i.next, i.result, i.lease, i.state) s;
                v_slow_ord := v_slow_ord || i.ord;
                v_slow_out := v_slow_out || c.outcome;
                v_slow_msg := v_slow_msg || c.next_msg_id;
                v_slow_rc := v_slow_rc || c.next_receipt;
            END IF;
        END LOOP;
    END IF;

    RETURN QUERY
        SELECT u.ord,
               CASE u.cls WHEN 'inline' THEN 'ok' WHEN 'finish' THEN 'ok'
                          WHEN 'slow' THEN v_slow_out[array_position(v_slow_ord, u.ord)]
                          ELSE u.cls END,
               CASE u.cls WHEN 'inline' THEN u.msg_id
                          WHEN 'slow' THEN v_slow_msg[array_position(v_slow_ord, u.ord)] END,
               CASE u.cls WHEN 'inline' THEN queue.receipt_of(v_kept_vt[array_position(v_kept, u.msg_id)])
                          WHEN 'slow' THEN v_slow_rc[array_position(v_slow_ord, u.ord)] END,
               v_versions[f.k], v_starts[f.k], v_ended[f.k], v_traces[f.k]
          FROM unnest(v_items) u,
               LATERAL (SELECT array_position(v_finished, u.run_id) AS k) f
         ORDER BY u.ord;
END $$;
