-- Topics: subscriptions, publishing with fan-out in one transaction, and the webhook outbox.

-- The anchored regular expression a topic pattern stands for ("*" one segment, a final "#" the
-- rest).
CREATE OR REPLACE FUNCTION queue.topic_pattern_regex(p_pattern text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
DECLARE
    v_segs  text[];
    v_regex text := '';
BEGIN
    PERFORM queue.check_topic(p_pattern, true);
    v_segs := string_to_array(p_pattern, '.');
    FOR i IN 1 .. cardinality(v_segs) LOOP
        IF v_segs[i] = '#' THEN
            -- zero or more further segments
            v_regex := v_regex || CASE WHEN i = 1 THEN '.*' ELSE '(\..*)?' END;
        ELSE
            v_regex := v_regex || CASE WHEN i = 1 THEN '' ELSE '\.' END
                               || CASE WHEN v_segs[i] = '*' THEN '[^.]+' ELSE replace(v_segs[i], '-', '\-') END;
        END IF;
    END LOOP;
    RETURN '^' || v_regex || '$';
END $$;

-- Subscribes a queue, workflow or http(s) URL to a pattern; idempotent for the same target, 42710
-- when the secret or the batch settings differ. A workflow subscription may batch (p_batch_max
-- messages or p_batch_timeout_ms, per value at p_batch_key; see batches.sql).
DROP FUNCTION IF EXISTS queue.subscribe(text, text, text, text);
CREATE OR REPLACE FUNCTION queue.subscribe(p_pattern text, p_type text, p_target text, p_secret text DEFAULT NULL::text, p_batch_max integer DEFAULT NULL::integer, p_batch_timeout_ms bigint DEFAULT NULL::bigint, p_batch_key text DEFAULT NULL::text)
 RETURNS TABLE(subscription_id bigint, created boolean)
 LANGUAGE plpgsql
AS $$
DECLARE
    v_regex text := queue.topic_pattern_regex(p_pattern);
    v_old   queue.subscription;
BEGIN
    IF p_type = 'queue' AND starts_with(p_target, '__wf_') THEN
        -- A workflow's queue need not exist yet: a send to it starts a run, which creates it.
        PERFORM queue.check_queue_name(p_target);
        PERFORM queue.check_workflow_name(substr(p_target, 6));
    ELSIF p_type = 'queue' THEN
        PERFORM queue.meta(p_target);
    ELSIF p_type = 'workflow' THEN
        PERFORM queue.check_workflow_name(p_target);
    ELSIF p_type IN ('http', 'https') THEN
        IF p_target IS NULL OR length(p_target) > 2048
           OR p_target !~* ('^' || p_type || '://[^/?#\s]+[^\s]*$') THEN
            RAISE EXCEPTION 'url must be an absolute %:// URL of at most 2048 characters', p_type
                USING ERRCODE = '22023';
        END IF;
        IF p_secret IS NOT NULL AND (length(p_secret) < 16 OR length(p_secret) > 256) THEN
            RAISE EXCEPTION 'secret must be 16 to 256 characters' USING ERRCODE = '22023';
        END IF;
    ELSE
        RAISE EXCEPTION 'subscription type must be one of queue, http, https, workflow; got "%"', p_type
            USING ERRCODE = '22023';
    END IF;
    IF p_type IN ('queue', 'workflow') AND p_secret IS NOT NULL THEN
        RAISE EXCEPTION 'a % subscription takes no secret', p_type USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_batch(p_type, p_batch_max, p_batch_timeout_ms, p_batch_key);

    PERFORM pg_advisory_xact_lock(hashtextextended('subscribe' || chr(1) || p_pattern, 7));
    SELECT * INTO v_old FROM queue.subscription s
     WHERE s.pattern = p_pattern AND s.target_type = p_type AND s.target = p_target;
    IF FOUND THEN
        IF v_old.secret IS DISTINCT FROM p_secret THEN
            RAISE EXCEPTION 'subscription % already exists with another secret', v_old.subscription_id
                USING ERRCODE = '42710';
        END IF;
        IF (v_old.batch_max, v_old.batch_timeout_ms, v_old.batch_key)
           IS DISTINCT FROM (p_batch_max, p_batch_timeout_ms, p_batch_key) THEN
            RAISE EXCEPTION 'subscription % already exists with other batch settings', v_old.subscription_id
                USING ERRCODE = '42710';
        END IF;
        RETURN QUERY SELECT v_old.subscription_id, false;
        RETURN;
    END IF;
    RETURN QUERY
        INSERT INTO queue.subscription (pattern, pattern_regex, target_type, target, secret,
                                        batch_max, batch_timeout_ms, batch_key)
        VALUES (p_pattern, v_regex, p_type, p_target, p_secret, p_batch_max, p_batch_timeout_ms, p_batch_key)
        RETURNING queue.subscription.subscription_id, true;
END $$;

-- Removes a subscription and its pending deliveries; returns whether it existed.
CREATE OR REPLACE FUNCTION queue.unsubscribe(p_subscription_id bigint)
 RETURNS boolean
 LANGUAGE sql
AS $$
    WITH gone AS (DELETE FROM queue.subscription WHERE subscription_id = p_subscription_id RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM gone);
$$;

-- Fans a message out to every matching subscription in the caller's transaction; one row per
-- subscription reached. A queue subscription to a workflow's queue starts a run, as a send does; a
-- workflow subscription that batches adds the message to its batch (type batched, the item's id),
-- or starts the batch's run when the message fills it (type workflow, the run's id).
-- Then the runs that workflows' cancel-on rules cancel for the message, a row each (type cancel).
CREATE OR REPLACE FUNCTION queue.publish(p_topic text, p_body jsonb, p_headers jsonb DEFAULT NULL::jsonb)
 RETURNS TABLE(subscription_id bigint, target_type text, target text, id bigint)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    s       queue.subscription;
    v_http  boolean := false;
BEGIN
    PERFORM queue.check_topic(p_topic, false);
    PERFORM queue.check_message(p_body, p_headers, 0, NULL);
    FOR s IN SELECT * FROM queue.subscription x WHERE p_topic ~ x.pattern_regex ORDER BY x.subscription_id LOOP
        subscription_id := s.subscription_id;
        target_type := s.target_type;
        target := s.target;
        IF s.target_type = 'queue' THEN
            id := queue.send(s.target, p_body,
                             coalesce(p_headers, '{}'::jsonb) || jsonb_build_object('topic', p_topic));
        ELSIF s.target_type = 'workflow' AND s.batch_max IS NOT NULL THEN
            SELECT b.outcome, b.id INTO target_type, id FROM queue.batch_add(s, p_topic, p_body) b;
        ELSIF s.target_type = 'workflow' THEN
            SELECT w.run_id INTO id
              FROM queue.workflow_start(s.target, p_body, NULL, p_headers ->> 'idempotencyKey') w;
        ELSE
            INSERT INTO queue.outbox (subscription_id, url, secret, topic, body, headers)
            VALUES (s.subscription_id, s.target, s.secret, p_topic, p_body, p_headers)
            RETURNING delivery_id INTO id;
            v_http := true;
        END IF;
        RETURN NEXT;
    END LOOP;
    IF v_http THEN
        PERFORM queue.notify_once('#outbox');
    END IF;
    -- The runs workflows' cancel-on rules cancel for this message: a row each, of type cancel,
    -- naming the workflow and the run.
    FOR target, id IN SELECT k.workflow_name, k.run_id FROM queue.workflow_cancel_by_topic(p_topic, p_body) k LOOP
        subscription_id := NULL;
        target_type := 'cancel';
        RETURN NEXT;
    END LOOP;
END $$;

-- Leases up to p_limit due webhook deliveries and counts the attempt; a deliverer that dies loses
-- only its lease.
CREATE OR REPLACE FUNCTION queue.claim_deliveries(p_limit integer, p_lease_seconds integer)
 RETURNS SETOF queue.outbox
 LANGUAGE sql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    UPDATE queue.outbox o
       SET attempts = o.attempts + 1,
           next_attempt_at = clock_timestamp() + make_interval(secs => p_lease_seconds)
     WHERE o.delivery_id IN (
           SELECT delivery_id FROM queue.outbox
            WHERE status = 'pending' AND next_attempt_at <= clock_timestamp()
            ORDER BY next_attempt_at
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED)
    RETURNING o.*;
$$;

-- Records a delivery attempt's outcome: delivered, retry after p_retry_ms, or dead after
-- p_max_attempts.
CREATE OR REPLACE FUNCTION queue.finish_delivery(p_delivery_id bigint, p_ok boolean, p_error text, p_max_attempts integer, p_retry_ms bigint)
 RETURNS text
 LANGUAGE sql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    UPDATE queue.outbox
       SET status = CASE WHEN p_ok THEN 'delivered'
                         WHEN attempts >= p_max_attempts THEN 'dead'
                         ELSE 'pending' END,
           finished_at = CASE WHEN p_ok OR attempts >= p_max_attempts THEN clock_timestamp() END,
           next_attempt_at = CASE WHEN p_ok THEN next_attempt_at
                                  ELSE clock_timestamp() + make_interval(secs => p_retry_ms / 1000.0) END,
           last_error = CASE WHEN p_ok THEN last_error ELSE left(p_error, 1000) END
     WHERE delivery_id = p_delivery_id AND status = 'pending'
    RETURNING status;
$$;

-- When the next pending webhook delivery is due (null when none).
CREATE OR REPLACE FUNCTION queue.next_delivery_at()
 RETURNS timestamp with time zone
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
    SELECT min(next_attempt_at) FROM queue.outbox WHERE status = 'pending';
$$;
