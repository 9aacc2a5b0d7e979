-- Start timing: delayed and debounced starts, and run deadlines.

-- A start's timing from its fields (startAt or delayMs, deadlineAt or deadlineMs, debounceKey with
-- debounceMs), checked: 22023 naming the field when one is malformed or out of bounds. due_at is
-- null for a run due at once; a startAt in the past means now; deadlineMs counts from when the run
-- is due.
CREATE OR REPLACE FUNCTION queue.workflow_timing(p_timing jsonb, p_now timestamp with time zone)
 RETURNS TABLE(due_at timestamp with time zone, deadline_at timestamp with time zone, debounce_key text, debounce_ms integer)
 LANGUAGE plpgsql
 STABLE
AS $$
DECLARE
    v_year  interval := interval '365 days';
    v_field text;
    v_at    timestamptz;
BEGIN
    FOREACH v_field IN ARRAY ARRAY['startAt', 'deadlineAt', 'debounceKey'] LOOP
        IF jsonb_typeof(coalesce(p_timing -> v_field, 'null')) NOT IN ('string', 'null') THEN
            RAISE EXCEPTION '% must be a string', v_field USING ERRCODE = '22023';
        END IF;
    END LOOP;
    FOREACH v_field IN ARRAY ARRAY['delayMs', 'deadlineMs', 'debounceMs'] LOOP
        IF jsonb_typeof(coalesce(p_timing -> v_field, 'null')) NOT IN ('number', 'null')
           OR (p_timing ->> v_field)::numeric <> trunc((p_timing ->> v_field)::numeric) THEN
            RAISE EXCEPTION '% must be a whole number of milliseconds', v_field USING ERRCODE = '22023';
        END IF;
    END LOOP;
    IF p_timing ->> 'startAt' IS NOT NULL AND p_timing ->> 'delayMs' IS NOT NULL THEN
        RAISE EXCEPTION 'delayMs: give startAt or delayMs, not both' USING ERRCODE = '22023';
    END IF;
    IF p_timing ->> 'deadlineAt' IS NOT NULL AND p_timing ->> 'deadlineMs' IS NOT NULL THEN
        RAISE EXCEPTION 'deadlineMs: give deadlineAt or deadlineMs, not both' USING ERRCODE = '22023';
    END IF;
    IF (p_timing ->> 'debounceKey' IS NULL) <> (p_timing ->> 'debounceMs' IS NULL) THEN
        RAISE EXCEPTION 'debounceMs: debounceKey and debounceMs go together' USING ERRCODE = '22023';
    END IF;
    IF p_timing ->> 'debounceKey' IS NOT NULL
       AND (p_timing ->> 'startAt' IS NOT NULL OR p_timing ->> 'delayMs' IS NOT NULL) THEN
        RAISE EXCEPTION 'debounceKey cannot be combined with startAt or delayMs' USING ERRCODE = '22023';
    END IF;

    IF p_timing ->> 'startAt' IS NOT NULL THEN
        v_at := queue.workflow_instant('startAt', p_timing ->> 'startAt');
        IF v_at > p_now + v_year THEN
            RAISE EXCEPTION 'startAt must be at most a year ahead' USING ERRCODE = '22023';
        END IF;
        due_at := greatest(v_at, p_now);
    ELSIF p_timing ->> 'delayMs' IS NOT NULL THEN
        PERFORM queue.check_range('delayMs', least(greatest((p_timing ->> 'delayMs')::numeric, -1), 1e15)::bigint, 0, 31536000000);
        due_at := p_now + make_interval(secs => (p_timing ->> 'delayMs')::numeric / 1000);
    END IF;
    IF p_timing ->> 'debounceKey' IS NOT NULL THEN
        debounce_key := p_timing ->> 'debounceKey';
        IF length(debounce_key) NOT BETWEEN 1 AND 255 THEN
            RAISE EXCEPTION 'debounceKey must be 1 to 255 characters' USING ERRCODE = '22023';
        END IF;
        PERFORM queue.check_range('debounceMs', least(greatest((p_timing ->> 'debounceMs')::numeric, -1), 1e15)::bigint, 1, 86400000);
        debounce_ms := (p_timing ->> 'debounceMs')::int;
        due_at := p_now + make_interval(secs => debounce_ms / 1000.0);
    END IF;
    IF p_timing ->> 'deadlineAt' IS NOT NULL THEN
        deadline_at := queue.workflow_instant('deadlineAt', p_timing ->> 'deadlineAt');
        IF deadline_at <= coalesce(due_at, p_now) THEN
            RAISE EXCEPTION 'deadlineAt must be later than the run is due' USING ERRCODE = '22023';
        END IF;
        IF deadline_at > coalesce(due_at, p_now) + v_year THEN
            RAISE EXCEPTION 'deadlineAt must be at most a year after the run is due' USING ERRCODE = '22023';
        END IF;
    ELSIF p_timing ->> 'deadlineMs' IS NOT NULL THEN
        PERFORM queue.check_range('deadlineMs', least(greatest((p_timing ->> 'deadlineMs')::numeric, -1), 1e15)::bigint, 1, 31536000000);
        deadline_at := coalesce(due_at, p_now) + make_interval(secs => (p_timing ->> 'deadlineMs')::numeric / 1000);
    END IF;
    RETURN NEXT;
END $$;

-- An ISO-8601 instant with its offset; 22023 naming the field otherwise.
CREATE OR REPLACE FUNCTION queue.workflow_instant(p_field text, p_text text)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $$
BEGIN
    IF p_text !~ '^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$' THEN
        RAISE EXCEPTION '% must be an instant such as 2030-01-01T00:00:00Z', p_field USING ERRCODE = '22023';
    END IF;
    RETURN p_text::timestamptz;
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format THEN
    RAISE EXCEPTION '% must be an instant such as 2030-01-01T00:00:00Z', p_field USING ERRCODE = '22023';
END $$;

-- Folds a debounced start into the workflow's pending run of its key, if there is one: a running
-- run of the key whose first task no worker has been handed takes the new input, and its first
-- task is pushed to p_now plus the window, but no later than ten windows after the run was
-- created. Returns that run, or null when the caller must start a new run; the key's transaction
-- lock, held until commit, serialises the starts of one key so the caller's new run is the one
-- the next start finds.
CREATE OR REPLACE FUNCTION queue.workflow_debounce(p_name text, p_key text, p_window_ms integer, p_input jsonb, p_deadline jsonb, p_now timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    r       queue.workflow_run;
    v_ct    int;
    v_start boolean;
    v_due   timestamptz;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('queue.debounce/' || p_name || '/' || p_key, 0));
    SELECT * INTO r FROM queue.workflow_run wr
     WHERE wr.workflow_name = p_name AND wr.debounce_key = p_key
     ORDER BY wr.run_id DESC LIMIT 1;
    IF NOT FOUND OR r.status <> 'running' OR r.current_msg_id IS NULL THEN
        RETURN NULL;
    END IF;
    r := queue.workflow_lock(r.run_id);
    IF r.status <> 'running' OR r.current_msg_id IS NULL THEN
        RETURN NULL;
    END IF;
    -- Locked, the message cannot be handed out meanwhile (receives skip locked rows).
    EXECUTE format('SELECT m.read_ct, m.body ->> ''reason'' = ''start'' FROM queue.%I m
                     WHERE m.msg_id = $1 FOR UPDATE', 'q___wf_' || p_name)
       INTO v_ct, v_start USING r.current_msg_id;
    IF v_ct IS NULL OR v_ct > 0 OR NOT v_start THEN
        RETURN NULL;
    END IF;
    v_due := least(p_now + make_interval(secs => p_window_ms / 1000.0),
                   r.started_at + make_interval(secs => p_window_ms * 10 / 1000.0));
    v_due := greatest(v_due, p_now);
    EXECUTE format('UPDATE queue.%I SET vt = $2 WHERE msg_id = $1', 'q___wf_' || p_name)
      USING r.current_msg_id, v_due;
    UPDATE queue.workflow_run wr
       SET input = p_input, due_at = v_due,
           deadline_at = CASE
               WHEN p_deadline ->> 'deadlineMs' IS NOT NULL
                   THEN v_due + make_interval(secs => (p_deadline ->> 'deadlineMs')::numeric / 1000)
               WHEN p_deadline ->> 'deadlineAt' IS NOT NULL
                   THEN greatest((p_deadline ->> 'deadlineAt')::timestamptz, v_due + interval '1 millisecond')
               ELSE wr.deadline_at END
     WHERE wr.run_id = r.run_id;
    RETURN r.run_id;
END $$;

-- Ends up to p_limit running runs whose deadline has passed by p_now as timed_out, with the error
-- {"type": "DeadlineExceeded"}, as a cancel would: running children started with on_parent_cancel
-- 'cancel' are cancelled first, the run's message is dropped, and a worker holding it finds out
-- on its next write. A run someone else holds is left for the next call. Returns each run this
-- ended, the children included, with what reporting its end needs.
CREATE OR REPLACE FUNCTION queue.workflow_expire(p_limit integer, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(run_id bigint, workflow_name text, workflow_version integer, status text, started_at timestamp with time zone, completed_at timestamp with time zone, trace_context text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_now  timestamptz := coalesce(p_now, clock_timestamp());
    v_from timestamptz;
    v_id   bigint;
    c      bigint;
    r      queue.workflow_run;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 10000);
    FOR v_id IN SELECT wr.run_id FROM queue.workflow_run wr
                 WHERE wr.status = 'running' AND wr.deadline_at <= v_now
                 ORDER BY wr.deadline_at LIMIT p_limit LOOP
        v_from := clock_timestamp();
        -- Children before their parent, as workflow_cancel locks them.
        FOR c IN SELECT k.run_id FROM queue.workflow_run k
                  WHERE k.parent_run_id = v_id AND k.status = 'running' AND k.on_parent_cancel = 'cancel'
                  ORDER BY k.run_id LOOP
            PERFORM * FROM queue.workflow_cancel(c);
        END LOOP;
        SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = v_id FOR UPDATE SKIP LOCKED;
        IF NOT FOUND OR r.status <> 'running' OR r.deadline_at > v_now THEN
            CONTINUE;
        END IF;
        FOR c IN SELECT k.run_id FROM queue.workflow_run k
                  WHERE k.parent_run_id = v_id AND k.status = 'running' AND k.on_parent_cancel = 'cancel'
                  ORDER BY k.run_id LOOP
            PERFORM * FROM queue.workflow_cancel(c);
        END LOOP;
        IF r.current_msg_id IS NOT NULL THEN
            PERFORM queue.delete('__wf_' || r.workflow_name, r.current_msg_id);
        END IF;
        UPDATE queue.workflow_run wr
           SET status = 'timed_out', completed_at = clock_timestamp(), current_msg_id = NULL,
               error = jsonb_build_object(
                   'type', 'DeadlineExceeded',
                   'message', 'the run did not end by its deadline '
                              || to_char(r.deadline_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
               wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL,
               wait_arms = NULL, wait_all = NULL, wait_fired = NULL
         WHERE wr.run_id = v_id;
        RETURN QUERY
            WITH RECURSIVE d AS (
                SELECT k.run_id FROM queue.workflow_run k WHERE k.parent_run_id = v_id
                UNION ALL
                SELECT k.run_id FROM queue.workflow_run k JOIN d ON k.parent_run_id = d.run_id)
            SELECT k.run_id, k.workflow_name, k.workflow_version, k.status::text, k.started_at,
                   k.completed_at, k.trace_context
              FROM queue.workflow_run k
             WHERE k.run_id = v_id
                OR (k.run_id IN (SELECT d.run_id FROM d) AND k.status::text = 'cancelled'
                    AND k.completed_at >= v_from);
    END LOOP;
END $$;

-- Whether a start or a batch item carries timing fields (then it takes workflow_start's general path).
CREATE OR REPLACE FUNCTION queue.workflow_timed(p_item jsonb)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT coalesce(p_item ?| ARRAY['startAt', 'delayMs', 'deadlineAt', 'deadlineMs', 'debounceKey', 'debounceMs'], false);
$$;
