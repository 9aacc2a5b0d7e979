-- An inline continuation no longer rewrites its message on every step.
--
-- Until now each step that continued a run inline set the held message's vt
-- to a fresh lease, read_ct to 1 and its reason to "resume": a new row
-- version with new entries in all three indexes of the queue table (vt is in
-- the ready index, so the update could never be HOT), whose dead versions
-- receive and the timers' look-ahead then walked past until vacuum came. Now
-- the row is locked and only changed where something changes; the lease is
-- renewed once less than two thirds of it are left. A worker heartbeats every
-- third of its lease while a step runs, so the lease it holds at the start of
-- a step covers the step until the first heartbeat, as before.
--
-- So a completion can now come twice with a receipt that still holds: the
-- worker retries one whose answer was lost. Its step is journaled already
-- (a duplicate); the message is no longer acked for it, which would have
-- left the run without one.
--
-- The message a completion names must be the run's own (current_msg_id):
-- only the receipt was checked against the message and the status against
-- the run, so a worker holding one run's task could, by naming another run,
-- journal its step into that run or end it. Another run's message now holds
-- no lease ('stale', nothing changes), and a completion for a run that is no
-- longer running acks the named message only when it is that run's.
--
-- The batch's look-up of its runs goes by key alone (the listing indexes lead
-- with the workflow name and served it worse).
--
-- Both functions are replaced whole; CREATE OR REPLACE drops their settings,
-- so the index-plan setting of V010 is set again at the end.

-- Deletes p_msg_id from the workflow queue p_queue if it is a message of run
-- p_run_id (its group); returns whether it did.
CREATE FUNCTION queue.workflow_drop_message(p_queue text, p_run_id bigint, p_msg_id bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
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

-- p_items: a JSON array of {run_id, msg_id, receipt, step_name?, step_kind?,
-- output?, error?, started_at?, next?, result?, lease?}, at most one per run.
-- Returns one row per item, in input order (ord counts from 1); for a run
-- that finished here also its version, start, end and trace context.
CREATE OR REPLACE FUNCTION queue.workflow_complete_batch(p_name text, p_items jsonb)
RETURNS TABLE (
    ord           int,
    outcome       text,
    next_msg_id   bigint,
    next_receipt  bigint,
    version       int,
    started_at    timestamptz,
    completed_at  timestamptz,
    trace_context text
)
LANGUAGE plpgsql AS $$
DECLARE
    v_tbl       text := 'q___wf_' || p_name;
    v_now       timestamptz := clock_timestamp();
    v_items     queue.workflow_completion[];
    v_run_ids   bigint[];
    v_live      bigint[];
    v_status    text[];
    v_current   bigint[];
    v_ids       bigint[];
    v_rcpts     bigint[];
    v_leases    int[];
    v_kept      bigint[] := '{}';
    v_kept_vt   timestamptz[] := '{}';
    v_kept_ct   int[] := '{}';
    v_gone      bigint[] := '{}';
    v_gone_ct   int[] := '{}';
    v_groups    text[] := '{}';
    v_journaled bigint[];
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
    i           queue.workflow_completion;
    c           record;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    IF p_items IS NULL OR jsonb_typeof(p_items) <> 'array' THEN
        RAISE EXCEPTION 'completions must be a JSON array' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('batch size', jsonb_array_length(p_items), 1, 1000);
    IF NOT EXISTS (SELECT 1 FROM queue.queue_meta WHERE queue_name = '__wf_' || p_name) THEN
        RAISE EXCEPTION 'workflow "%" has no runs', p_name USING ERRCODE = 'P0002';
    END IF;

    SELECT array_agg(ROW(j.ord, j.run_id, j.msg_id, j.receipt, j.step_name, j.step_kind, j.output,
                         j.error, j.started_at, j.next, j.result, coalesce(j.lease, 60), NULL, NULL
                     )::queue.workflow_completion ORDER BY j.ord),
           array_agg(j.run_id)
      INTO v_items, v_run_ids
      FROM ROWS FROM (jsonb_to_recordset(p_items) AS (
               run_id bigint, msg_id bigint, receipt bigint, step_name text, step_kind text,
               output jsonb, error jsonb, started_at timestamptz, next jsonb, result jsonb,
               lease int)) WITH ORDINALITY AS j(
               run_id, msg_id, receipt, step_name, step_kind, output, error, started_at, next,
               result, lease, ord);
    IF (SELECT count(DISTINCT r) <> count(*) OR count(r) <> count(*) FROM unnest(v_run_ids) r) THEN
        RAISE EXCEPTION 'a batch may complete each run at most once' USING ERRCODE = '22023';
    END IF;

    -- A run that ends here is locked first, runs before messages in id order
    -- as every other writer does. An inline step changes only its message,
    -- and the lease check on that row decides against a concurrent cancel.
    PERFORM 1 FROM queue.workflow_run wr
     WHERE wr.run_id = ANY (ARRAY(SELECT u.run_id FROM unnest(v_items) u WHERE u.result IS NOT NULL))
     ORDER BY wr.run_id
       FOR UPDATE;
    -- By key alone: a run of another workflow is not found.
    SELECT coalesce(array_agg(wr.run_id) FILTER (WHERE wr.workflow_name = p_name), '{}'),
           coalesce(array_agg(wr.status::text) FILTER (WHERE wr.workflow_name = p_name), '{}'),
           coalesce(array_agg(wr.current_msg_id) FILTER (WHERE wr.workflow_name = p_name), '{}')
      INTO v_live, v_status, v_current
      FROM queue.workflow_run wr
     WHERE wr.run_id = ANY (v_run_ids);

    v_items := ARRAY(
        SELECT ROW(u.ord, u.run_id, u.msg_id, u.receipt, u.step_name, u.step_kind, u.output, u.error,
                   u.started_at, u.next, u.result, u.lease,
                   CASE WHEN k.s IS NULL THEN 'not_found'
                        WHEN v_status[k.s] <> 'running' THEN 'slow'
                        -- A message that is not the run's own holds no lease on it.
                        WHEN v_current[k.s] IS DISTINCT FROM u.msg_id THEN 'stale'
                        WHEN u.next = '{"inline": true}'::jsonb AND u.result IS NULL THEN 'inline'
                        WHEN u.next IS NULL AND u.result IS NOT NULL THEN 'finish'
                        ELSE 'slow' END,
                   NULL)::queue.workflow_completion
          FROM unnest(v_items) u, LATERAL (SELECT array_position(v_live, u.run_id) AS s) k
         ORDER BY u.ord);
    IF EXISTS (SELECT 1 FROM unnest(v_items) u
                WHERE u.msg_id IS NULL OR u.receipt IS NULL
                   OR u.lease NOT BETWEEN 1 AND 43200
                   OR (u.cls IN ('inline', 'finish') AND u.step_name IS NOT NULL
                       AND (u.step_name !~ '^[a-zA-Z0-9._-]{1,128}$'
                            OR u.step_kind IS NULL OR u.step_kind NOT IN ('run', 'sleep', 'wait')))
                   OR (u.cls = 'finish'
                       AND (u.result ->> 'status' IS NULL OR u.result ->> 'status' NOT IN ('completed', 'failed')
                            OR (u.result ->> 'status' = 'failed' AND u.result -> 'error' IS NULL)))) THEN
        RAISE EXCEPTION 'a completion in the batch is malformed' USING ERRCODE = '22023';
    END IF;

    -- 1. Inline continuations keep their lease, where the receipt still holds
    -- it: the same message carries the run on. Its row is locked and left as
    -- it is unless something changes: the lease is renewed only once less
    -- than two thirds of it are left (a new vt means new index entries, and
    -- a new receipt), read_ct restarts at 1 (its old value is the step's
    -- attempts) and the reason becomes "resume".
    SELECT array_agg(u.msg_id), array_agg(u.receipt), array_agg(u.lease)
      INTO v_ids, v_rcpts, v_leases
      FROM unnest(v_items) u WHERE u.cls = 'inline';
    IF v_ids IS NOT NULL THEN
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
            format('%L, %L, %L, %L', v_ids, v_rcpts, v_leases, v_now))
            INTO v_kept, v_kept_vt, v_kept_ct;
    END IF;

    -- 2. The messages of finishing runs are acked, where the receipt still
    -- holds the lease.
    SELECT array_agg(u.msg_id), array_agg(u.receipt)
      INTO v_ids, v_rcpts
      FROM unnest(v_items) u WHERE u.cls = 'finish';
    IF v_ids IS NOT NULL THEN
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
            format('%L, %L', v_ids, v_rcpts))
            INTO v_gone, v_gone_ct, v_groups;
    END IF;

    -- A receipt that no longer holds the lease changed nothing: stale.
    v_items := ARRAY(
        SELECT ROW(u.ord, u.run_id, u.msg_id, u.receipt, u.step_name, u.step_kind, u.output, u.error,
                   u.started_at, u.next, u.result, u.lease,
                   CASE WHEN u.cls = 'inline' AND NOT (u.msg_id = ANY (v_kept)) THEN 'stale'
                        WHEN u.cls = 'finish' AND NOT (u.msg_id = ANY (v_gone)) THEN 'stale'
                        ELSE u.cls END,
                   CASE u.cls WHEN 'inline' THEN v_kept_ct[array_position(v_kept, u.msg_id)]
                              WHEN 'finish' THEN v_gone_ct[array_position(v_gone, u.msg_id)] END
                  )::queue.workflow_completion
          FROM unnest(v_items) u ORDER BY u.ord);

    -- 3. Journal. A step already journaled makes its item a duplicate and
    -- changes nothing else. An inline continuation keeps its receipt now, so
    -- the usual duplicate is the worker's own retry of a completion whose
    -- answer it never got: the message stays with the run (the worker lets
    -- the lease run out and the run is taken up again from its journal).
    WITH ins AS (
        INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, error, attempts, started_at)
        SELECT u.run_id, u.step_name,
               (SELECT coalesce(max(s.seq), 0) + 1 FROM queue.workflow_step s WHERE s.run_id = u.run_id),
               u.step_kind, u.output, u.error, greatest(coalesce(u.read_ct, 1), 1),
               coalesce(u.started_at, v_now)
          FROM unnest(v_items) u
         WHERE u.cls IN ('inline', 'finish') AND u.step_name IS NOT NULL
        ON CONFLICT DO NOTHING
        RETURNING workflow_step.run_id)
    SELECT coalesce(array_agg(ins.run_id), '{}') INTO v_journaled FROM ins;

    IF EXISTS (SELECT 1 FROM unnest(v_items) u
                WHERE u.cls IN ('inline', 'finish') AND u.step_name IS NOT NULL
                  AND NOT (u.run_id = ANY (v_journaled))) THEN
        v_items := ARRAY(
            SELECT ROW(u.ord, u.run_id, u.msg_id, u.receipt, u.step_name, u.step_kind, u.output,
                       u.error, u.started_at, u.next, u.result, u.lease,
                       CASE WHEN u.cls IN ('inline', 'finish') AND u.step_name IS NOT NULL
                                 AND NOT (u.run_id = ANY (v_journaled)) THEN 'duplicate'
                            ELSE u.cls END,
                       u.read_ct)::queue.workflow_completion
              FROM unnest(v_items) u ORDER BY u.ord);
    END IF;

    -- 4. Finished runs.
    IF EXISTS (SELECT 1 FROM unnest(v_items) u WHERE u.cls = 'finish') THEN
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
        EXECUTE format($q$
            WITH p AS (
                UPDATE queue.%1$I q SET head = true
                 WHERE q.msg_id IN (SELECT min(o.msg_id) FROM queue.%1$I o
                                     WHERE o.group_id = ANY ($1) GROUP BY o.group_id)
                   AND NOT q.head
                RETURNING q.vt)
            SELECT coalesce(array_agg(p.vt), '{}') FROM p$q$, v_tbl)
            INTO v_vts USING v_groups;
        IF EXISTS (SELECT 1 FROM unnest(v_vts) t WHERE t <= v_now) THEN
            PERFORM queue.notify_once('__wf_' || p_name);
        END IF;
    END IF;

    -- 6. Everything else, one by one.
    FOREACH i IN ARRAY v_items LOOP
        IF i.cls = 'slow' THEN
            SELECT * INTO c FROM queue.workflow_complete_step(
                i.run_id, i.msg_id, i.receipt, i.step_name, i.step_kind, i.output, i.error,
                i.started_at, i.next, i.result, i.lease) s;
            v_slow_ord := v_slow_ord || i.ord;
            v_slow_out := v_slow_out || c.outcome;
            v_slow_msg := v_slow_msg || c.next_msg_id;
            v_slow_rc := v_slow_rc || c.next_receipt;
        END IF;
    END LOOP;

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

CREATE OR REPLACE FUNCTION queue.workflow_complete_step(
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
            -- An inline continuation's duplicate is most likely the worker's
            -- retry of one that went through: its message stays with the run.
            IF NOT coalesce((p_next ->> 'inline')::boolean, false) THEN
                PERFORM queue.delete(v_queue, p_msg_id);
            END IF;
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
        -- Keep the lease: the same message carries the run on, changed only
        -- where it must be (as in workflow_complete_batch): the lease renewed
        -- once less than two thirds of it are left, read_ct back at 1 so the
        -- next step's attempt count starts afresh, the reason "resume". The
        -- row is locked already (workflow_holds_lease).
        EXECUTE queue.prepared_sql('wf_cont_' || v_queue, 'q_' || v_queue, $q$
            WITH o AS (
                SELECT q.vt, q.vt < $2 + make_interval(secs => $3 * 2 / 3.0) AS renew,
                       q.read_ct <> 1 OR q.body ->> 'reason' IS DISTINCT FROM 'resume' AS touched
                  FROM queue.%1$I q WHERE q.msg_id = $1),
                 u AS (
                UPDATE queue.%1$I q
                   SET vt = CASE WHEN o.renew THEN $2 + make_interval(secs => $3) ELSE q.vt END,
                       read_ct = 1,
                       body = CASE WHEN q.body ->> 'reason' = 'resume' THEN q.body
                                   ELSE q.body || '{"reason": "resume"}'::jsonb END
                  FROM o
                 WHERE q.msg_id = $1 AND (o.renew OR o.touched)
                RETURNING q.vt)
            SELECT coalesce((SELECT u.vt FROM u), (SELECT o.vt FROM o))$q$,
            'bigint, timestamptz, int',
            format('%L, %L, %L', p_msg_id, clock_timestamp(), p_lease))
            INTO v_vt;
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

ALTER FUNCTION queue.workflow_complete_batch(text, jsonb) SET enable_seqscan = off;
ALTER FUNCTION queue.workflow_complete_step(bigint, bigint, bigint, text, text, jsonb, jsonb, timestamptz, jsonb, jsonb, int)
    SET enable_seqscan = off;
