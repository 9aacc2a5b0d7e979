-- A lone inline completion (a step whose run goes on at once, on the same
-- message) is the commonest call a worker makes, and it cost more than it
-- needs: it locked the run's row (a row lock is a write: WAL and a dirtied
-- page) though it never changes the run, and read its message three times
-- (the lease check, read_ct for the step's attempts, the continuation).
--
-- It now takes the path workflow_complete_batch already takes for inline
-- items: the run is read without a lock, and the message is locked, checked
-- against the receipt and touched in one prepared statement, which also
-- returns the read_ct the step's attempts come from. The lease check on the
-- message row decides against a concurrent cancel, as in the batch: a cancel
-- deletes the message, so one side waits for the other's commit and the
-- completion comes out stale or the cancel comes after it.
--
-- Outcomes do not change, with one exception the batch shares: a duplicate
-- inline step (the worker's retry of a completion that went through) now
-- touches the message before the journal finds the step, so its read_ct is 1
-- and its lease may be renewed; the message stays with the run either way.
-- A run that is not running takes the general path, which drops its message.
CREATE FUNCTION queue.workflow_continue_step(
    p_run_id bigint,
    p_msg_id bigint,
    p_receipt bigint,
    p_step_name text,
    p_step_kind text,
    p_output jsonb,
    p_error jsonb,
    p_started_at timestamptz,
    p_next jsonb,
    p_lease int)
RETURNS TABLE(outcome text, next_msg_id bigint, next_receipt bigint)
LANGUAGE plpgsql AS $$
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
BEGIN
    SELECT wr.workflow_name, wr.status, wr.current_msg_id INTO v_name, v_status, v_current
      FROM queue.workflow_run wr WHERE wr.run_id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow run % does not exist', p_run_id USING ERRCODE = 'P0002';
    END IF;
    IF v_status <> 'running' THEN
        RETURN; -- no row: the caller takes the general path
    END IF;
    IF v_current IS DISTINCT FROM p_msg_id THEN
        RETURN QUERY SELECT 'stale'::text, NULL::bigint, NULL::bigint;
        RETURN;
    END IF;
    IF p_step_name IS NOT NULL THEN
        PERFORM queue.check_step_name(p_step_name);
        IF p_step_kind IS NULL OR p_step_kind NOT IN ('run', 'sleep', 'wait') THEN
            RAISE EXCEPTION 'step kind must be run, sleep or wait' USING ERRCODE = '22023';
        END IF;
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
        INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, error, attempts, started_at)
        VALUES (p_run_id, p_step_name,
                (SELECT coalesce(max(s.seq), 0) + 1 FROM queue.workflow_step s WHERE s.run_id = p_run_id),
                p_step_kind, p_output, p_error, greatest(coalesce(v_ct, 1), 1),
                coalesce(p_started_at, v_now))
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'duplicate'::text, NULL::bigint, NULL::bigint;
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT 'ok'::text, p_msg_id, queue.receipt_of(v_vt);
END $$;

ALTER FUNCTION queue.workflow_continue_step(bigint, bigint, bigint, text, text, jsonb, jsonb, timestamptz, jsonb, int)
    SET enable_seqscan = off;
ALTER FUNCTION queue.workflow_continue_step(bigint, bigint, bigint, text, text, jsonb, jsonb, timestamptz, jsonb, int)
    SET plan_cache_mode = force_generic_plan;

-- workflow_complete_step sends inline completions down that path first. The
-- rest of its body is unchanged; it is patched in place (as V017 patched the
-- batch) so that it keeps its settings.
DO $$
DECLARE
    v_old text := pg_get_functiondef(
        'queue.workflow_complete_step(bigint, bigint, bigint, text, text, jsonb, jsonb, timestamptz, jsonb, jsonb, int)'::regprocedure);
    v_new text;
BEGIN
    v_new := replace(replace(replace(v_old,
        $old$r         queue.workflow_run := queue.workflow_lock(p_run_id);$old$,
        $new$r         queue.workflow_run;$new$),
        $old$v_queue   text := '__wf_' || r.workflow_name;$old$,
        $new$v_queue   text;$new$),
        $old$BEGIN
    IF r.status <> 'running' THEN$old$,
        $new$BEGIN
    IF coalesce((p_next ->> 'inline')::boolean, false) THEN
        RETURN QUERY SELECT * FROM queue.workflow_continue_step(
            p_run_id, p_msg_id, p_receipt, p_step_name, p_step_kind, p_output, p_error,
            p_started_at, p_next, p_lease);
        IF FOUND THEN
            RETURN;
        END IF;
    END IF;
    r := queue.workflow_lock(p_run_id);
    v_queue := '__wf_' || r.workflow_name;
    IF r.status <> 'running' THEN$new$);
    IF v_new = v_old OR position('queue.workflow_lock(p_run_id);' IN v_new) = 0
       OR position('workflow_run := queue.workflow_lock' IN v_new) > 0
       OR position('workflow_continue_step' IN v_new) = 0 THEN
        RAISE EXCEPTION 'workflow_complete_step does not have the expected body to patch';
    END IF;
    EXECUTE v_new;
END $$;
