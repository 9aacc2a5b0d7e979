-- A run started while a worker's poll waits for its workflow used to reach
-- that worker the long way: the start's NOTIFY, the listener, a wake-up, and
-- a poll that received the message, read the run and its (empty) journal.
-- The server that takes the start knows whether one of its polls is waiting,
-- and on what terms (the versions it runs, how many tasks, the lease).
--
-- workflow_start_leased starts runs exactly as workflow_start (one item) or
-- workflow_start_batch (more) would, and in the same transaction leases the
-- first messages of up to p_take of the runs it created whose version is in
-- p_versions, as a receive of that poll would: read_ct 1, visible again after
-- p_lease seconds. It answers each item as the start does, and for a leased
-- run what the poll hands the worker. The leased messages wake nobody: the
-- transaction's NOTIFY goes out only when a run it created was not leased.
-- Runs an idempotency key already named are never leased; their messages
-- are wherever they are.
CREATE FUNCTION queue.workflow_start_leased(
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

    -- A lone, well-formed item takes the single start, which is cheaper than
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
