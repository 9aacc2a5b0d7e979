-- A batch of starts without idempotency keys is written with three statements
-- for the whole batch (run ids, first messages, runs) instead of a call of
-- workflow_start per run, each with its own checks, look-ups and statements.
-- The workflow's default version and its queue are looked up once. A batch in
-- which any start has a key goes to the start-by-start function as before
-- (kept under the name workflow_start_each): the run rows decide which of
-- racing starts wins, and a key given twice names one run. Validation and its
-- errors are those of workflow_start; a bad item still fails the whole batch
-- before anything is written.
ALTER FUNCTION queue.workflow_start_batch(text, jsonb, int) RENAME TO workflow_start_each;

CREATE FUNCTION queue.workflow_start_batch(p_name text, p_items jsonb, p_max_retention_days int DEFAULT 365)
RETURNS TABLE (ord int, run_id bigint, status queue.workflow_status, created boolean)
LANGUAGE plpgsql AS $$
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
    PERFORM queue.check_range('batch size', jsonb_array_length(p_items), 1, 1000);
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_items) e WHERE e.value ->> 'idempotencyKey' IS NOT NULL) THEN
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
    RETURN QUERY SELECT u.n::int, u.run, 'running'::queue.workflow_status, true
                   FROM unnest(v_runs) WITH ORDINALITY u(run, n) ORDER BY u.n;
END $$;

ALTER FUNCTION queue.workflow_start_batch(text, jsonb, int) SET enable_seqscan = off;
