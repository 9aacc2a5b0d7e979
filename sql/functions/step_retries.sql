-- A run's retrying step: what a worker hands back when an attempt of a step fails (workflow_retry
-- records it in queue.step_retry), and an operator's controls over those retries for one run:
-- pause and resume them, reset the attempts counted, change the retry options. The task carries
-- the operator's options to the worker in its body's "stepOptions"; "stepPaused" in the body marks
-- a task whose step is paused, so a poll that receives it (a lease that ran out) parks it.

-- The run's retrying step while the row still speaks for it: the run is running, its current
-- message is the one the retry was handed back on, and the step has no journal row. Null otherwise.
CREATE OR REPLACE FUNCTION queue.step_retry_current(p_run queue.workflow_run)
 RETURNS queue.step_retry
 LANGUAGE sql
 STABLE
AS $$
    SELECT sr.* FROM queue.step_retry sr
     WHERE sr.run_id = (p_run).run_id AND (p_run).status = 'running'
       AND sr.msg_id = (p_run).current_msg_id
       AND NOT EXISTS (SELECT 1 FROM queue.workflow_step s
                        WHERE s.run_id = sr.run_id AND s.step_name = sr.step_name);
$$;

-- Whether the run's retrying step has its retries paused.
CREATE OR REPLACE FUNCTION queue.step_retry_paused(p_run queue.workflow_run)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $$
    SELECT coalesce((SELECT sr.paused_at IS NOT NULL FROM queue.step_retry_current(p_run) sr
                      WHERE sr.run_id IS NOT NULL), false);
$$;

-- Records that attempt p_attempt of step p_step failed with p_error and the next is due at p_due.
-- A new step (or a new message) starts a fresh row; the same step keeps its pause and options.
CREATE OR REPLACE FUNCTION queue.step_retry_record(p_run queue.workflow_run, p_step text, p_error jsonb, p_attempt integer, p_due timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
AS $$
DECLARE
    v_error jsonb := CASE WHEN octet_length(p_error::text) > 8192
                          THEN jsonb_build_object('message', left(p_error ->> 'message', 2000))
                          ELSE p_error END;
BEGIN
    INSERT INTO queue.step_retry AS sr (run_id, step_name, msg_id, attempt, error, failed_at, due_at)
    VALUES (p_run.run_id, p_step, p_run.current_msg_id, p_attempt, v_error, clock_timestamp(), p_due)
    ON CONFLICT (run_id) DO UPDATE
       SET step_name = excluded.step_name, msg_id = excluded.msg_id, attempt = excluded.attempt,
           error = excluded.error, failed_at = excluded.failed_at, due_at = excluded.due_at,
           paused_at = CASE WHEN sr.step_name = excluded.step_name AND sr.msg_id = excluded.msg_id
                            THEN sr.paused_at END,
           options = CASE WHEN sr.step_name = excluded.step_name AND sr.msg_id = excluded.msg_id
                          THEN sr.options END,
           updated_at = clock_timestamp();
END $$;

-- A keyed run whose task is parked gives up its slot, or its place in line, to the next run of its
-- key; it is admitted afresh when its task is due again (as workflow_park_paused does for a pause).
CREATE OR REPLACE FUNCTION queue.flow_leave(p_run queue.workflow_run)
 RETURNS void
 LANGUAGE plpgsql
AS $$
DECLARE
    v_woken boolean;
BEGIN
    IF p_run.concurrency_key IS NULL THEN
        RETURN;
    END IF;
    IF p_run.slot_held THEN
        UPDATE queue.workflow_run wr SET slot_held = NULL WHERE wr.run_id = p_run.run_id;
        PERFORM queue.flow_freed(p_run.workflow_name, p_run.concurrency_key);
    END IF;
    DELETE FROM queue.concurrency_wait cw
     WHERE cw.workflow_name = p_run.workflow_name AND cw.concurrency_key = p_run.concurrency_key
       AND cw.run_id = p_run.run_id
    RETURNING cw.woken INTO v_woken;
    IF v_woken THEN
        PERFORM queue.flow_freed(p_run.workflow_name, p_run.concurrency_key);
    END IF;
END $$;

-- The retrying step p_step of run p_run (locked): raises WF003 when the run is not running or is
-- not retrying that step.
CREATE OR REPLACE FUNCTION queue.step_retry_held(p_run queue.workflow_run, p_step text)
 RETURNS queue.step_retry
 LANGUAGE plpgsql
AS $$
DECLARE
    sr queue.step_retry;
BEGIN
    PERFORM queue.check_step_name(p_step);
    IF p_run.status <> 'running' THEN
        RAISE EXCEPTION 'run % is %: it retries no step', p_run.run_id, p_run.status
            USING ERRCODE = 'WF003';
    END IF;
    sr := queue.step_retry_current(p_run);
    IF sr.run_id IS NULL OR sr.step_name <> p_step THEN
        RAISE EXCEPTION 'run % is not retrying step "%"%', p_run.run_id, p_step,
            CASE WHEN sr.run_id IS NOT NULL THEN format(': the step it retries is "%s"', sr.step_name)
                 ELSE ': no attempt of it has failed since its last success or restart' END
            USING ERRCODE = 'WF003';
    END IF;
    RETURN sr;
END $$;

-- Where the run's retrying step stands: {"runId", "step", "attempt", "error", "failedAt",
-- "nextAttemptAt", "state", "paused", "pausedAt", "options"}. state is backoff (waiting for its
-- next attempt), running (an attempt is out with a worker), paused (parked until resumed) or
-- run_paused (the run is paused). p_run must be locked or read in the caller's snapshot.
CREATE OR REPLACE FUNCTION queue.step_retry_view(p_run queue.workflow_run, sr queue.step_retry)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $$
DECLARE
    v_vt    timestamptz;
    v_ct    int;
    v_state text;
BEGIN
    EXECUTE format('SELECT vt, read_ct FROM queue.%I WHERE msg_id = $1', 'q___wf_' || p_run.workflow_name)
        INTO v_vt, v_ct USING sr.msg_id;
    v_state := CASE WHEN v_vt = queue.parked_vt() AND sr.paused_at IS NOT NULL THEN 'paused'
                    WHEN v_vt = queue.parked_vt() OR p_run.paused_at IS NOT NULL THEN 'run_paused'
                    WHEN v_ct > sr.attempt THEN 'running'
                    ELSE 'backoff' END;
    RETURN jsonb_build_object(
        'runId', p_run.run_id, 'step', sr.step_name, 'attempt', sr.attempt, 'error', sr.error,
        'failedAt', queue.api_instant(sr.failed_at),
        'nextAttemptAt', CASE WHEN v_state = 'backoff' THEN queue.api_instant(greatest(v_vt, sr.due_at)) END,
        'state', v_state, 'paused', sr.paused_at IS NOT NULL,
        'pausedAt', queue.api_instant(sr.paused_at), 'options', sr.options);
END $$;

-- The retrying step p_step of run p_run_id, as step_retry_view answers; P0002 for no such run,
-- WF003 when the run is not retrying that step.
CREATE OR REPLACE FUNCTION queue.workflow_step_retry(p_run_id bigint, p_step text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
AS $$
DECLARE
    r queue.workflow_run;
BEGIN
    SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = p_run_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow run % does not exist', p_run_id USING ERRCODE = 'P0002';
    END IF;
    RETURN queue.step_retry_view(r, queue.step_retry_held(r, p_step));
END $$;

-- Pauses (p_paused) or resumes the retries of run p_run_id's retrying step p_step. A paused step
-- is not tried again: a task waiting for its backoff is parked now, and one whose attempt is out
-- with a worker is parked when that attempt fails or its lease runs out; an attempt that succeeds
-- ends the retries, pause and all. A resume makes a parked task due now (unless the run itself is
-- paused). A keyed run gives up its slot while parked. Answers as workflow_step_retry.
CREATE OR REPLACE FUNCTION queue.workflow_step_pause(p_run_id bigint, p_step text, p_paused boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $$
DECLARE
    r       queue.workflow_run := queue.workflow_lock(p_run_id);
    sr      queue.step_retry := queue.step_retry_held(r, p_step);
    v_queue text := '__wf_' || r.workflow_name;
    v_moved bigint;
    v_vt    timestamptz;
    v_due   boolean;
BEGIN
    IF p_paused IS NULL THEN
        RAISE EXCEPTION 'paused must not be null' USING ERRCODE = '22023';
    END IF;
    IF p_paused THEN
        IF sr.paused_at IS NULL THEN
            UPDATE queue.step_retry x SET paused_at = clock_timestamp(), updated_at = clock_timestamp()
             WHERE x.run_id = p_run_id;
        END IF;
        -- Marked for a poll that receives it; parked now unless an attempt is out with a worker
        -- (the receive that took it counted one more than the attempts recorded).
        EXECUTE format('UPDATE queue.%I SET body = body || ''{"stepPaused": true}''::jsonb,'
                       ' vt = CASE WHEN read_ct = $2 THEN queue.parked_vt() ELSE vt END'
                       ' WHERE msg_id = $1 RETURNING CASE WHEN vt = queue.parked_vt() THEN msg_id END',
                       'q_' || v_queue)
            USING sr.msg_id, sr.attempt INTO v_moved;
        IF v_moved IS NOT NULL THEN
            PERFORM queue.flow_leave(r);
        END IF;
    ELSE
        EXECUTE format('SELECT vt FROM queue.%I WHERE msg_id = $1 FOR UPDATE', 'q_' || v_queue)
            INTO v_vt USING sr.msg_id;
        -- A parked task is due now, unless the run itself is paused; a keyed run's admission
        -- decides again (flow_admit) when the poll receives it.
        v_due := v_vt = queue.parked_vt() AND r.paused_at IS NULL;
        EXECUTE format('UPDATE queue.%I SET body = body - ''stepPaused'','
                       ' vt = CASE WHEN $2 THEN clock_timestamp() ELSE vt END WHERE msg_id = $1',
                       'q_' || v_queue)
            USING sr.msg_id, v_due;
        UPDATE queue.step_retry x
           SET paused_at = NULL, updated_at = clock_timestamp(),
               due_at = CASE WHEN v_due THEN clock_timestamp() ELSE x.due_at END
         WHERE x.run_id = p_run_id;
        IF v_due THEN
            PERFORM queue.notify_once(v_queue);
        END IF;
    END IF;
    SELECT * INTO sr FROM queue.step_retry x WHERE x.run_id = p_run_id;
    RETURN queue.step_retry_view(r, sr);
END $$;

-- Resets the attempts counted for run p_run_id's retrying step p_step: its next attempt is
-- attempt 1, with all of its policy's attempts before it, and is due now (still parked while the
-- step or the run is paused). Refused (WF003) while an attempt is out with a worker: that attempt's
-- outcome would count against the old number. Answers as workflow_step_retry.
CREATE OR REPLACE FUNCTION queue.workflow_step_reset(p_run_id bigint, p_step text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $$
DECLARE
    r       queue.workflow_run := queue.workflow_lock(p_run_id);
    sr      queue.step_retry := queue.step_retry_held(r, p_step);
    v_queue text := '__wf_' || r.workflow_name;
    v_ct    int;
    v_vt    timestamptz;
BEGIN
    EXECUTE format('SELECT read_ct, vt FROM queue.%I WHERE msg_id = $1 FOR UPDATE', 'q_' || v_queue)
        INTO v_ct, v_vt USING sr.msg_id;
    IF v_ct > sr.attempt AND v_vt <> queue.parked_vt() THEN
        RAISE EXCEPTION 'attempt % of step "%" of run % is out with a worker: reset its attempts once it has failed',
            v_ct, p_step, p_run_id USING ERRCODE = 'WF003';
    END IF;
    -- The next receive counts attempt 1. Its reason is no longer a start: a start not yet taken
    -- (read_ct 0, reason start) is what a debounce may still change.
    EXECUTE format('UPDATE queue.%I SET read_ct = 0,'
                   ' body = body || ''{"reason": "resume"}''::jsonb,'
                   ' vt = CASE WHEN vt = queue.parked_vt() THEN vt ELSE clock_timestamp() END'
                   ' WHERE msg_id = $1 RETURNING vt', 'q_' || v_queue)
        USING sr.msg_id INTO v_vt;
    UPDATE queue.step_retry x SET attempt = 0, due_at = v_vt, updated_at = clock_timestamp()
     WHERE x.run_id = p_run_id
    RETURNING * INTO sr;
    IF v_vt < queue.parked_vt() THEN
        PERFORM queue.notify_once(v_queue);
    END IF;
    RETURN queue.step_retry_view(r, sr);
END $$;

-- The operator's retry options, checked: an object of attempts (1-1000), backoff (fixed, linear or
-- exponential), baseMs and maxMs (0 to a day, maxMs at least baseMs when both are given) and
-- timeoutMs (1 ms to 12 h), each optional; 22023 naming the field otherwise. Null for no options.
CREATE OR REPLACE FUNCTION queue.check_step_options(p_options jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
DECLARE
    k    text;
    v    jsonb;
    v_n  numeric;
    v_lo bigint;
    v_hi bigint;
    o    jsonb := '{}'::jsonb;
BEGIN
    IF p_options IS NULL OR jsonb_typeof(p_options) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(p_options) <> 'object' THEN
        RAISE EXCEPTION 'options must be an object' USING ERRCODE = '22023';
    END IF;
    FOR k, v IN SELECT * FROM jsonb_each(p_options) LOOP
        CONTINUE WHEN jsonb_typeof(v) = 'null';
        CASE k
            WHEN 'attempts', 'baseMs', 'maxMs', 'timeoutMs' THEN
                IF jsonb_typeof(v) <> 'number' OR v::text ~ '[.eE]' THEN
                    RAISE EXCEPTION '% must be a whole number', k USING ERRCODE = '22023';
                END IF;
                v_n := (v #>> '{}')::numeric;
                v_lo := CASE WHEN k IN ('attempts', 'timeoutMs') THEN 1 ELSE 0 END;
                v_hi := CASE k WHEN 'attempts' THEN 1000 WHEN 'timeoutMs' THEN 43200000 ELSE 86400000 END;
                IF v_n < v_lo OR v_n > v_hi THEN
                    RAISE EXCEPTION '% must be between % and %, got %', k, v_lo, v_hi, left(v::text, 40)
                        USING ERRCODE = '22023';
                END IF;
            WHEN 'backoff' THEN
                IF jsonb_typeof(v) <> 'string' OR v #>> '{}' NOT IN ('fixed', 'linear', 'exponential') THEN
                    RAISE EXCEPTION 'backoff must be "fixed", "linear" or "exponential"' USING ERRCODE = '22023';
                END IF;
            ELSE
                RAISE EXCEPTION 'options.% is not an option (attempts, backoff, baseMs, maxMs, timeoutMs)',
                    left(k, 64) USING ERRCODE = '22023';
        END CASE;
        o := o || jsonb_build_object(k, v);
    END LOOP;
    IF (o ->> 'maxMs')::bigint < (o ->> 'baseMs')::bigint THEN
        RAISE EXCEPTION 'maxMs must be at least baseMs' USING ERRCODE = '22023';
    END IF;
    RETURN nullif(o, '{}'::jsonb);
END $$;

-- Sets the retry options of run p_run_id's retrying step p_step for this run (replacing those set
-- before; {} or null clears them): the worker that takes the step's next attempt applies each
-- option given over the code's policy. An attempt out with a worker ends under the policy it began
-- with. Answers as workflow_step_retry.
CREATE OR REPLACE FUNCTION queue.workflow_step_options(p_run_id bigint, p_step text, p_options jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $$
DECLARE
    r       queue.workflow_run := queue.workflow_lock(p_run_id);
    sr      queue.step_retry := queue.step_retry_held(r, p_step);
    v_opts  jsonb := queue.check_step_options(p_options);
BEGIN
    EXECUTE format('UPDATE queue.%I SET body = CASE WHEN $2 IS NULL THEN body - ''stepOptions'''
                   ' ELSE body || jsonb_build_object(''stepOptions'', $2 || jsonb_build_object(''step'', $3::text)) END'
                   ' WHERE msg_id = $1', 'q___wf_' || r.workflow_name)
        USING sr.msg_id, v_opts, p_step;
    UPDATE queue.step_retry x SET options = v_opts, updated_at = clock_timestamp()
     WHERE x.run_id = p_run_id
    RETURNING * INTO sr;
    RETURN queue.step_retry_view(r, sr);
END $$;
