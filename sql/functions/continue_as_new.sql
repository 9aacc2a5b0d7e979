-- Continue-as-new: a run ends and its successor starts with a fresh journal, in one transaction;
-- the runs so linked form a chain.

-- Ends a run under its lease and starts its successor with p_input, in one transaction: the held
-- step p_step (a completion the worker had not sent yet), if given, is journaled; the run ends
-- completed with output {"continuedTo": <successor>} and continued_to set; its message is acked;
-- the successor is a new start of the same workflow (the newest version served, as a start without
-- a version) with the run's retention, concurrency key, priority and parent, the trace identity
-- p_trace_context, continued_from set. The idempotency key moves to the successor, so a start
-- repeating it finds the chain's newest run. The successor keeps the run's deadline and an
-- operator's pause, and takes the run's buffered (undelivered) signals. Answers ok with the
-- successor, stale (the receipt no longer holds the lease: nothing changes), or not_running (the
-- run had ended; a repeat of a continuation that committed answers its successor).
CREATE OR REPLACE FUNCTION queue.workflow_continue_as_new(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_input jsonb, p_step jsonb DEFAULT NULL::jsonb, p_max_retention_days integer DEFAULT 365, p_trace_context text DEFAULT NULL::text)
 RETURNS TABLE(outcome text, continued_to bigint)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r       queue.workflow_run;
    v_queue text;
    v_ct    int;
    v_next  bigint;
    v_first bigint;
    v_flow  jsonb;
BEGIN
    IF p_step IS NOT NULL THEN
        IF jsonb_typeof(p_step) <> 'object' THEN
            RAISE EXCEPTION 'step must be an object' USING ERRCODE = '22023';
        END IF;
        PERFORM queue.check_step_name(p_step ->> 'name');
        PERFORM queue.check_step_kind(p_step ->> 'kind');
    END IF;
    r := queue.workflow_lock(p_run_id);
    v_queue := '__wf_' || r.workflow_name;
    IF r.status <> 'running' THEN
        PERFORM queue.workflow_drop_message(v_queue, p_run_id, p_msg_id);
        RETURN QUERY SELECT 'not_running'::text, r.continued_to;
        RETURN;
    END IF;
    IF r.current_msg_id IS DISTINCT FROM p_msg_id
       OR NOT queue.workflow_holds_lease(v_queue, p_msg_id, p_receipt) THEN
        RETURN QUERY SELECT 'stale'::text, NULL::bigint;
        RETURN;
    END IF;

    IF p_step IS NOT NULL THEN
        v_ct := queue.read_ct(v_queue, p_msg_id);
        -- Under the lease no one else journals this run, so a row already there is this step's own.
        IF nullif(p_step -> 'state', 'null'::jsonb) IS NOT NULL THEN
            PERFORM queue.check_run_state('step.state', p_run_id, p_step -> 'state');
        END IF;
        PERFORM queue.workflow_journal_step(
            p_run_id, p_step ->> 'name', p_step ->> 'kind', p_step -> 'output',
            nullif(p_step -> 'error', 'null'::jsonb), v_ct, (p_step ->> 'startedAt')::timestamptz,
            NULL, nullif(p_step -> 'state', 'null'::jsonb));
    END IF;

    -- The key leaves the run before the successor takes it (the key is unique per workflow).
    IF r.idempotency_key IS NOT NULL THEN
        UPDATE queue.workflow_run wr SET idempotency_key = NULL WHERE wr.run_id = p_run_id;
    END IF;
    -- The successor keeps its key as it is: no concurrency strategy applies (continuedFrom).
    v_flow := nullif(jsonb_strip_nulls(jsonb_build_object('concurrencyKey', r.concurrency_key,
                                                          'priority', r.priority)), '{}'::jsonb)
              || jsonb_build_object('continuedFrom', p_run_id);
    SELECT s.run_id INTO v_next
      FROM queue.workflow_start(r.workflow_name, p_input, NULL, r.idempotency_key, r.retention_days,
                                greatest(p_max_retention_days, r.retention_days), p_trace_context,
                                v_flow) s;
    v_first := coalesce(r.chain_first, p_run_id);
    UPDATE queue.workflow_run wr
       SET continued_from = p_run_id, chain_first = v_first, parent_run_id = r.parent_run_id,
           parent_step = r.parent_step, on_parent_cancel = r.on_parent_cancel,
           -- An operator's pause holds the chain (the poll parks the successor's first task), and
           -- the chain keeps the deadline it was given.
           paused_at = r.paused_at, deadline_at = r.deadline_at, slot_limit = r.slot_limit
     WHERE wr.run_id = v_next;
    -- Signals no wait took yet are the successor's to wait for.
    UPDATE queue.workflow_signal ws SET run_id = v_next
     WHERE ws.run_id = p_run_id AND ws.delivered_at IS NULL;
    -- The child-ended trigger passes a run that continues: its chain's last run reports the end.
    UPDATE queue.workflow_run wr
       SET status = 'completed', output = jsonb_build_object('continuedTo', v_next), error = NULL,
           completed_at = clock_timestamp(), current_msg_id = NULL, continued_to = v_next,
           chain_first = v_first,
           wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL
     WHERE wr.run_id = p_run_id;
    PERFORM queue.delete(v_queue, p_msg_id);
    RETURN QUERY SELECT 'ok'::text, v_next;
END $$;

-- The runs of the chain p_run_id belongs to, first to last, after the run id p_after (the page's
-- cursor); just the run itself when it is in no chain. P0002 when the run does not exist.
CREATE OR REPLACE FUNCTION queue.workflow_chain(p_run_id bigint, p_after bigint DEFAULT NULL::bigint, p_limit integer DEFAULT 100)
 RETURNS SETOF queue.workflow_run
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_first bigint;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    SELECT wr.chain_first INTO v_first FROM queue.workflow_run wr WHERE wr.run_id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow run % does not exist', p_run_id USING ERRCODE = 'P0002';
    END IF;
    IF v_first IS NULL THEN
        RETURN QUERY SELECT * FROM queue.workflow_run wr
                      WHERE wr.run_id = p_run_id AND (p_after IS NULL OR wr.run_id > p_after);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM queue.workflow_run wr
                  WHERE wr.chain_first = v_first AND (p_after IS NULL OR wr.run_id > p_after)
                  ORDER BY wr.run_id
                  LIMIT p_limit;
END $$;

-- The last run of the chain p_run_id belongs to (the chain's running member while it goes on);
-- the run itself when it is in no chain. Found by the chain's first run, so runs retention took
-- from the middle of the chain are not needed. P0002 when the run does not exist.
CREATE OR REPLACE FUNCTION queue.workflow_chain_last(p_run_id bigint)
 RETURNS SETOF queue.workflow_run
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_first bigint;
    v_next  bigint;
BEGIN
    SELECT wr.chain_first, wr.continued_to INTO v_first, v_next
      FROM queue.workflow_run wr WHERE wr.run_id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow run % does not exist', p_run_id USING ERRCODE = 'P0002';
    END IF;
    IF v_next IS NULL THEN
        RETURN QUERY SELECT * FROM queue.workflow_run wr WHERE wr.run_id = p_run_id;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM queue.workflow_run wr
                  WHERE wr.chain_first = v_first ORDER BY wr.run_id DESC LIMIT 1;
END $$;
