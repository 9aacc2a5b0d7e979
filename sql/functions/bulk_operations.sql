-- Bulk operations: an operator's action (cancel, signal, pause, resume, restart) on every run a
-- query selects (run_query_statement), made a page at a time by bulk_step. Each page is one
-- transaction that acts on its runs, records each one's outcome and moves the job's cursor, so a
-- server that dies mid-job leaves it to go on from the last committed page: each run is acted on
-- once.

-- Makes a job; raises 22023 naming the field for a bad action, its parameters, a rate out of 1 to
-- 1000, or a selection of more than 1000 runs without p_confirm.
CREATE OR REPLACE FUNCTION queue.bulk_create(p_action text, p_query text, p_query_tree jsonb, p_params jsonb, p_rate integer, p_confirm boolean, p_actor text)
 RETURNS SETOF queue.bulk_operation
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $$
DECLARE
    v_params jsonb := coalesce(p_params, '{}'::jsonb);
    v_top    bigint;
    v_count  bigint;
BEGIN
    IF p_action IS NULL OR p_action NOT IN ('cancel', 'signal', 'pause', 'resume', 'restart') THEN
        RAISE EXCEPTION 'action must be cancel, signal, pause, resume or restart, not "%"',
            left(coalesce(p_action, ''), 40) USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('ratePerSecond', p_rate, 1, 1000);
    IF p_action = 'signal' THEN
        IF coalesce(v_params ->> 'event', '') = '' OR length(v_params ->> 'event') > 128
           OR starts_with(v_params ->> 'event', '__') THEN
            RAISE EXCEPTION 'event must be 1 to 128 characters, not starting "__"' USING ERRCODE = '22023';
        END IF;
    ELSIF v_params ? 'event' OR v_params ? 'payload' THEN
        RAISE EXCEPTION 'event and payload go with the action signal only' USING ERRCODE = '22023';
    END IF;
    IF v_params ? 'fromStep' THEN
        IF p_action <> 'restart' THEN
            RAISE EXCEPTION 'fromStep goes with the action restart only' USING ERRCODE = '22023';
        END IF;
        PERFORM queue.check_step_name(v_params ->> 'fromStep');
    END IF;
    SELECT max(r.run_id) INTO v_top FROM queue.workflow_run r;
    v_count := queue.run_count(p_query_tree);
    IF v_count > 1000 AND NOT coalesce(p_confirm, false) THEN
        RAISE EXCEPTION 'confirm: the query selects % runs; more than 1000 need confirm true', v_count
            USING ERRCODE = '22023';
    END IF;
    RETURN QUERY
        INSERT INTO queue.bulk_operation (action, query, query_tree, params, selected, rate, next_before, created_by)
        VALUES (p_action, p_query, p_query_tree, v_params, v_count, p_rate, coalesce(v_top, 0) + 1, p_actor)
        RETURNING *;
END $$;

-- The step a restart of run p_run_id begins at: p_from_step when given, else the first journal row
-- that failed; null when there is none.
CREATE OR REPLACE FUNCTION queue.bulk_restart_step(p_run_id bigint, p_from_step text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $$
    SELECT coalesce(p_from_step,
                    (SELECT s.step_name FROM queue.workflow_step s
                      WHERE s.run_id = p_run_id AND (s.error IS NOT NULL OR s.timed_out)
                      ORDER BY s.seq LIMIT 1));
$$;

-- Acts on one run: 'done', or 'skipped' with the reason when the run is not in a state the action
-- fits. Other errors are raised.
CREATE OR REPLACE FUNCTION queue.bulk_apply(p_batch_id bigint, p_action text, p_params jsonb, p_run_id bigint, OUT o_outcome text, OUT o_detail text)
 LANGUAGE plpgsql
AS $$
DECLARE
    v_ok   boolean;
    v_what text;
    v_step text;
BEGIN
    o_outcome := 'done';
    CASE p_action
    WHEN 'cancel' THEN
        SELECT c.cancelled, c.status::text INTO v_ok, v_what FROM queue.workflow_cancel(p_run_id) c;
        IF NOT v_ok THEN
            o_outcome := 'skipped';
            o_detail := 'the run is ' || v_what;
        END IF;
    WHEN 'signal' THEN
        -- The job's own key: a page done again after a crash stores no second signal.
        SELECT s.outcome INTO v_what
          FROM queue.workflow_signal(p_run_id, p_params ->> 'event', coalesce(p_params -> 'payload', 'null'::jsonb),
                                     'batch-' || p_batch_id) s;
        IF v_what NOT IN ('delivered', 'buffered', 'cancelled') THEN
            o_outcome := 'skipped';
            o_detail := 'the signal was ' || v_what;
        END IF;
    WHEN 'pause', 'resume' THEN
        PERFORM queue.workflow_run_pause(p_run_id, p_action = 'pause');
    WHEN 'restart' THEN
        v_step := queue.bulk_restart_step(p_run_id, p_params ->> 'fromStep');
        IF v_step IS NULL THEN
            o_outcome := 'skipped';
            o_detail := 'the run has no failed step';
        ELSE
            PERFORM queue.workflow_restart(p_run_id, v_step);
            o_detail := 'from step ' || v_step;
        END IF;
    END CASE;
EXCEPTION
    -- A run in a state the action does not fit (WF003), or a step it lacks (22023).
    WHEN SQLSTATE 'WF003' OR SQLSTATE '22023' THEN
        o_outcome := 'skipped';
        o_detail := SQLERRM;
END $$;

-- Acts on the job's next page of up to p_limit runs, newest first, in this transaction: each run's
-- outcome is recorded and the cursor moved past it. A job another session is stepping is passed
-- (0). A lock conflict with other traffic ends the page before its run, which the next step takes
-- again. A page shorter than p_limit ends the job. Answers how many runs this step acted on and the
-- job's status after it.
CREATE OR REPLACE FUNCTION queue.bulk_step(p_batch_id bigint, p_limit integer)
 RETURNS TABLE(acted integer, status text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $$
DECLARE
    b       queue.bulk_operation;
    q       record;
    v_run   bigint;
    v_last  bigint;
    v_seen  int := 0;
    v_stop  boolean := false;
    v_outcome text;
    v_detail  text;
    v_done  int := 0;
    v_skip  int := 0;
    v_fail  int := 0;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    SELECT * INTO b FROM queue.bulk_operation o WHERE o.batch_id = p_batch_id FOR UPDATE SKIP LOCKED;
    IF NOT FOUND OR b.status <> 'running' THEN
        RETURN QUERY SELECT 0, b.status;
        RETURN;
    END IF;
    SELECT * INTO q FROM queue.run_query_statement(b.query_tree, false);
    v_last := b.next_before;
    FOR v_run IN EXECUTE 'SELECT s.run_id FROM (' || q.o_sql || ') s ORDER BY s.run_id DESC'
                     USING q.o_vals, b.next_before, p_limit LOOP
        v_seen := v_seen + 1;
        BEGIN
            SELECT x.o_outcome, x.o_detail INTO v_outcome, v_detail
              FROM queue.bulk_apply(b.batch_id, b.action, b.params, v_run) x;
        EXCEPTION
            WHEN deadlock_detected OR lock_not_available OR serialization_failure THEN
                v_stop := true;
            WHEN OTHERS THEN
                v_outcome := 'failed';
                v_detail := SQLERRM;
        END;
        EXIT WHEN v_stop;
        INSERT INTO queue.bulk_operation_run (batch_id, run_id, outcome, detail)
        VALUES (b.batch_id, v_run, v_outcome, v_detail)
        ON CONFLICT DO NOTHING;
        IF FOUND THEN
            CASE v_outcome WHEN 'done' THEN v_done := v_done + 1;
                             WHEN 'skipped' THEN v_skip := v_skip + 1;
                             ELSE v_fail := v_fail + 1; END CASE;
        END IF;
        v_last := v_run;
    END LOOP;
    UPDATE queue.bulk_operation o
       SET next_before = v_last,
           done = o.done + v_done,
           skipped = o.skipped + v_skip,
           failed = o.failed + v_fail,
           updated_at = now(),
           status = CASE WHEN v_seen < p_limit AND NOT v_stop THEN 'completed' ELSE o.status END,
           finished_at = CASE WHEN v_seen < p_limit AND NOT v_stop THEN now() END
     WHERE o.batch_id = b.batch_id
    RETURNING o.status INTO b.status;
    RETURN QUERY SELECT v_done + v_skip + v_fail, b.status;
END $$;

-- The jobs still running, oldest first, with their rates (what the leader steps each second).
CREATE OR REPLACE FUNCTION queue.bulk_running()
 RETURNS TABLE(batch_id bigint, rate integer)
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT o.batch_id, o.rate FROM queue.bulk_operation o WHERE o.status = 'running' ORDER BY o.batch_id;
$$;

-- Cancels a running job: it acts on no further run (a page in progress finishes first). A job that
-- has ended is answered as it is; no row for no such job.
CREATE OR REPLACE FUNCTION queue.bulk_cancel(p_batch_id bigint)
 RETURNS SETOF queue.bulk_operation
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    WITH c AS (
        UPDATE queue.bulk_operation o SET status = 'cancelled', finished_at = now(), updated_at = now()
         WHERE o.batch_id = p_batch_id AND o.status = 'running'
        RETURNING o.*)
    SELECT * FROM c
    UNION ALL
    SELECT * FROM queue.bulk_operation o WHERE o.batch_id = p_batch_id AND NOT EXISTS (SELECT 1 FROM c);
$$;

-- Jobs, newest first, before job p_before when given.
CREATE OR REPLACE FUNCTION queue.bulk_list(p_before bigint DEFAULT NULL::bigint, p_limit integer DEFAULT 50)
 RETURNS SETOF queue.bulk_operation
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT * FROM queue.bulk_operation o
     WHERE p_before IS NULL OR o.batch_id < p_before
     ORDER BY o.batch_id DESC
     LIMIT p_limit;
$$;

-- What a job did to each run, newest run first, after run p_before when given; of one outcome when
-- p_outcome is given.
CREATE OR REPLACE FUNCTION queue.bulk_runs(p_batch_id bigint, p_outcome text DEFAULT NULL::text, p_before bigint DEFAULT NULL::bigint, p_limit integer DEFAULT 100)
 RETURNS SETOF queue.bulk_operation_run
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT * FROM queue.bulk_operation_run r
     WHERE r.batch_id = p_batch_id
       AND (p_outcome IS NULL OR r.outcome = p_outcome)
       AND (p_before IS NULL OR r.run_id < p_before)
     ORDER BY r.run_id DESC
     LIMIT p_limit;
$$;
