-- Each run's signal inbox and the waits that take from it: a signal is delivered to the run's wait
-- when it fits one of the wait's arms, and kept (buffered) until a later wait takes it otherwise.
-- Child runs' ends come through the same inbox, as events named __child.<runId>.

-- Whether a payload fits a wait arm's match: an empty or absent match accepts any payload, scalars
-- included; otherwise the payload must contain it.
CREATE OR REPLACE FUNCTION queue.workflow_matches(p_payload jsonb, p_match jsonb)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT p_match IS NULL OR p_match = '{}'::jsonb OR coalesce(p_payload, 'null'::jsonb) @> p_match;
$$;

-- The arm (from 0) of a run's current wait that an event fits, or null: a one-event wait has arm 0;
-- an arm that has fired takes nothing more.
CREATE OR REPLACE FUNCTION queue.workflow_wait_arm(r queue.workflow_run, p_event text, p_payload jsonb)
 RETURNS integer
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
DECLARE
    i int;
BEGIN
    IF r.wait_step IS NULL THEN
        RETURN NULL;
    END IF;
    IF r.wait_arms IS NULL THEN
        IF r.wait_event = p_event AND queue.workflow_matches(p_payload, r.wait_match) THEN
            RETURN 0;
        END IF;
        RETURN NULL;
    END IF;
    FOR i IN 0 .. jsonb_array_length(r.wait_arms) - 1 LOOP
        IF (r.wait_fired -> i) = 'null'::jsonb
           AND r.wait_arms -> i ->> 'event' = p_event
           AND queue.workflow_matches(p_payload, r.wait_arms -> i -> 'match') THEN
            RETURN i;
        END IF;
    END LOOP;
    RETURN NULL;
END $$;

-- Gives a signal of the inbox to arm p_arm of the run's wait, the run being locked. When that
-- satisfies the wait (its one event, any arm, or the last of all arms) the wait's step is journaled
-- with what fired and the run is due now; otherwise the arm is recorded as fired. Returns whether
-- the wait was satisfied.
CREATE OR REPLACE FUNCTION queue.workflow_wait_fire(r queue.workflow_run, p_arm integer, p_signal_id bigint, p_event text, p_payload jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
AS $$
DECLARE
    v_queue  text := '__wf_' || r.workflow_name;
    v_fired  jsonb;
    v_output jsonb;
    v_msg    bigint;
BEGIN
    UPDATE queue.workflow_signal s
       SET delivered_at = clock_timestamp(), delivered_to = r.wait_step
     WHERE s.signal_id = p_signal_id;
    IF r.wait_arms IS NULL THEN
        v_output := p_payload;
    ELSE
        v_fired := jsonb_set(r.wait_fired, ARRAY[p_arm::text],
                             jsonb_build_object('event', p_event, 'payload', p_payload));
        IF r.wait_all AND v_fired @? '$[*] ? (@ == null)' THEN
            UPDATE queue.workflow_run wr SET wait_fired = v_fired WHERE wr.run_id = r.run_id;
            RETURN false;
        END IF;
        v_output := jsonb_build_object('fired', v_fired);
    END IF;
    INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, started_at)
    VALUES (r.run_id, r.wait_step,
            (SELECT coalesce(max(s.seq), 0) + 1 FROM queue.workflow_step s WHERE s.run_id = r.run_id),
            'wait', v_output, r.wait_since)
    ON CONFLICT DO NOTHING;
    v_msg := queue.enqueue(v_queue, jsonb_build_object('v', queue.task_v(r.workflow_version, r.sticky_worker), 'reason', 'signal'), NULL, 0,
                           r.run_id::text);
    IF r.current_msg_id IS NOT NULL THEN
        PERFORM queue.delete(v_queue, r.current_msg_id);
    END IF;
    UPDATE queue.workflow_run wr
       SET current_msg_id = v_msg, wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL,
           wait_arms = NULL, wait_all = NULL, wait_fired = NULL
     WHERE wr.run_id = r.run_id;
    RETURN true;
END $$;

-- Feeds a run's buffered signals, oldest first, to the wait it has just begun (the run locked), until
-- the wait is satisfied or nothing buffered fits.
CREATE OR REPLACE FUNCTION queue.workflow_wait_drain(p_run_id bigint)
 RETURNS void
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $$
DECLARE
    r      queue.workflow_run;
    s      record;
    v_arm  int;
BEGIN
    SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = p_run_id;
    FOR s IN SELECT b.signal_id, b.event, b.payload FROM queue.workflow_signal b
              WHERE b.run_id = p_run_id AND b.delivered_at IS NULL
                AND b.event = ANY (CASE WHEN r.wait_arms IS NULL THEN ARRAY[r.wait_event]
                                        ELSE ARRAY(SELECT a ->> 'event' FROM jsonb_array_elements(r.wait_arms) a)
                                   END)
              ORDER BY b.signal_id LOOP
        v_arm := queue.workflow_wait_arm(r, s.event, s.payload);
        CONTINUE WHEN v_arm IS NULL;
        EXIT WHEN queue.workflow_wait_fire(r, v_arm, s.signal_id, s.event, s.payload);
        SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = p_run_id;
    END LOOP;
END $$;

-- Puts a run into a wait, the run locked and its next message (the timeout, or none) already
-- sent: checks the wait's shape, records it, and lets buffered signals satisfy it at once.
CREATE OR REPLACE FUNCTION queue.workflow_wait_begin(p_run_id bigint, p_wait jsonb, p_msg_id bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $$
DECLARE
    v_arms jsonb := nullif(p_wait -> 'arms', 'null'::jsonb);
    a      jsonb;
BEGIN
    PERFORM queue.check_step_name(p_wait ->> 'step');
    IF v_arms IS NULL THEN
        IF coalesce(p_wait ->> 'event', '') = '' OR length(p_wait ->> 'event') > 128 THEN
            RAISE EXCEPTION 'a wait needs an event name of 1 to 128 characters' USING ERRCODE = '22023';
        END IF;
        IF p_wait -> 'match' IS NOT NULL AND jsonb_typeof(p_wait -> 'match') <> 'object' THEN
            RAISE EXCEPTION 'a wait''s match must be a JSON object' USING ERRCODE = '22023';
        END IF;
    ELSE
        IF jsonb_typeof(v_arms) <> 'array' OR jsonb_array_length(v_arms) NOT BETWEEN 1 AND 64 THEN
            RAISE EXCEPTION 'a wait''s arms must be an array of 1 to 64 arms' USING ERRCODE = '22023';
        END IF;
        FOR a IN SELECT * FROM jsonb_array_elements(v_arms) LOOP
            IF jsonb_typeof(a) <> 'object' OR coalesce(a ->> 'event', '') = '' OR length(a ->> 'event') > 128 THEN
                RAISE EXCEPTION 'each arm of a wait needs an event name of 1 to 128 characters'
                    USING ERRCODE = '22023';
            END IF;
            IF nullif(a -> 'match', 'null'::jsonb) IS NOT NULL AND jsonb_typeof(a -> 'match') <> 'object' THEN
                RAISE EXCEPTION 'an arm''s match must be a JSON object' USING ERRCODE = '22023';
            END IF;
        END LOOP;
    END IF;
    UPDATE queue.workflow_run wr
       SET current_msg_id = p_msg_id,
           wait_step = p_wait ->> 'step',
           wait_event = coalesce(p_wait ->> 'event', v_arms -> 0 ->> 'event'),
           wait_match = coalesce(nullif(p_wait -> 'match', 'null'::jsonb), '{}'::jsonb),
           wait_since = clock_timestamp(),
           wait_arms = v_arms,
           wait_all = CASE WHEN v_arms IS NOT NULL THEN coalesce((p_wait ->> 'all')::boolean, false) END,
           wait_fired = CASE WHEN v_arms IS NOT NULL
                             THEN (SELECT jsonb_agg('null'::jsonb) FROM jsonb_array_elements(v_arms)) END
     WHERE wr.run_id = p_run_id;
    IF EXISTS (SELECT 1 FROM queue.workflow_signal b WHERE b.run_id = p_run_id AND b.delivered_at IS NULL) THEN
        PERFORM queue.workflow_wait_drain(p_run_id);
    END IF;
END $$;

-- Sends an event to a run: kept in its inbox, and delivered at once when it fits the run's wait.
-- A repeated idempotency key stores nothing and answers as the first time did. The engine's own
-- events (child ends) come this way too; callers outside go through workflow_signal.
CREATE OR REPLACE FUNCTION queue.workflow_deliver(p_run_id bigint, p_event text, p_payload jsonb, p_key text DEFAULT NULL::text)
 RETURNS TABLE(outcome text, signal_id bigint, workflow_name text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    r     queue.workflow_run;
    v_id  bigint;
    v_arm int;
    v_at  timestamptz;
BEGIN
    SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = p_run_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'no such run'::text, NULL::bigint, NULL::text;
        RETURN;
    END IF;
    IF p_key IS NOT NULL THEN
        SELECT s.signal_id, s.delivered_at INTO v_id, v_at
          FROM queue.workflow_signal s WHERE s.run_id = p_run_id AND s.idempotency_key = p_key;
        IF FOUND THEN
            RETURN QUERY SELECT 'duplicate'::text, v_id, r.workflow_name;
            RETURN;
        END IF;
    END IF;
    IF r.status <> 'running' THEN
        RETURN QUERY SELECT 'not running'::text, NULL::bigint, r.workflow_name;
        RETURN;
    END IF;
    INSERT INTO queue.workflow_signal (run_id, event, payload, idempotency_key)
    VALUES (p_run_id, p_event, p_payload, p_key)
    RETURNING workflow_signal.signal_id INTO v_id;
    v_arm := queue.workflow_wait_arm(r, p_event, p_payload);
    IF v_arm IS NULL THEN
        RETURN QUERY SELECT 'buffered'::text, v_id, r.workflow_name;
        RETURN;
    END IF;
    PERFORM queue.workflow_wait_fire(r, v_arm, v_id, p_event, p_payload);
    RETURN QUERY SELECT 'delivered'::text, v_id, r.workflow_name;
END $$;

-- A run's signals in the order they were sent, buffered and delivered.
CREATE OR REPLACE FUNCTION queue.workflow_signals(p_run_id bigint)
 RETURNS TABLE(signal_id bigint, event text, payload jsonb, idempotency_key text, sent_at timestamp with time zone, delivered_at timestamp with time zone, delivered_to text)
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT s.signal_id, s.event, s.payload, s.idempotency_key, s.sent_at, s.delivered_at, s.delivered_to
      FROM queue.workflow_signal s WHERE s.run_id = p_run_id ORDER BY s.signal_id;
$$;
