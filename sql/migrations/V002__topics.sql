-- Topics: subscriptions by dot-separated pattern. A publish fans out in the
-- publisher's transaction, to queues (a send), to workflows (a run starts
-- with the message as input; queue.workflow_start arrives in V003) and to an
-- outbox that the server's delivery worker pushes to HTTP endpoints.
--
-- Patterns: segments of a-z 0-9 _ - separated by dots; "*" matches exactly
-- one segment, "#" (last segment only) matches zero or more segments.

CREATE TABLE queue.subscription (
    subscription_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pattern          text NOT NULL CHECK (length(pattern) <= 255),
    pattern_regex    text NOT NULL,
    target_type      text NOT NULL CHECK (target_type IN ('queue', 'http', 'https', 'workflow')),
    target           text NOT NULL,
    secret           text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (pattern, target_type, target)
);

-- HTTP deliveries, one row per (publish, http subscription).
CREATE TABLE queue.outbox (
    delivery_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subscription_id  bigint NOT NULL REFERENCES queue.subscription (subscription_id) ON DELETE CASCADE,
    url              text NOT NULL,
    secret           text,
    topic            text NOT NULL,
    body             jsonb NOT NULL,
    headers          jsonb,
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts         int NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    CHECK ((status = 'pending') = (finished_at IS NULL))
);
CREATE INDEX outbox_due_idx ON queue.outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_finished_idx ON queue.outbox (finished_at) WHERE status <> 'pending';

-- Raises 22023 unless p_topic is a topic (p_pattern false) or a pattern (true).
CREATE FUNCTION queue.check_topic(p_topic text, p_pattern boolean) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_what text := CASE WHEN p_pattern THEN 'topic pattern' ELSE 'topic' END;
    v_segs text[];
BEGIN
    IF p_topic IS NULL OR p_topic = '' THEN
        RAISE EXCEPTION '% must not be empty', v_what USING ERRCODE = '22023';
    END IF;
    IF length(p_topic) > 255 THEN
        RAISE EXCEPTION '% is longer than 255 characters', v_what USING ERRCODE = '22023';
    END IF;
    v_segs := string_to_array(p_topic, '.');
    FOR i IN 1 .. cardinality(v_segs) LOOP
        IF v_segs[i] ~ '^[a-z0-9_-]+$' THEN
            CONTINUE;
        ELSIF p_pattern AND v_segs[i] = '*' THEN
            CONTINUE;
        ELSIF p_pattern AND v_segs[i] = '#' AND i = cardinality(v_segs) THEN
            CONTINUE;
        END IF;
        RAISE EXCEPTION '% "%" has a bad segment "%": segments are a-z, 0-9, "_" and "-"%', v_what, p_topic, v_segs[i],
            CASE WHEN p_pattern THEN ', or "*", or "#" as the last segment' ELSE '' END
            USING ERRCODE = '22023';
    END LOOP;
END $$;

-- The anchored regular expression a pattern stands for.
CREATE FUNCTION queue.topic_pattern_regex(p_pattern text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
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

-- Subscribes a target (a queue, a workflow, or an http/https URL) to a pattern. Idempotent: the same pattern and target
-- return the existing subscription (created false); a different secret for
-- it raises 42710.
CREATE FUNCTION queue.subscribe(p_pattern text, p_type text, p_target text, p_secret text DEFAULT NULL)
RETURNS TABLE (subscription_id bigint, created boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_regex text := queue.topic_pattern_regex(p_pattern);
    v_old   queue.subscription;
BEGIN
    IF p_type = 'queue' THEN
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

    PERFORM pg_advisory_xact_lock(hashtextextended('subscribe' || chr(1) || p_pattern, 7));
    SELECT * INTO v_old FROM queue.subscription s
     WHERE s.pattern = p_pattern AND s.target_type = p_type AND s.target = p_target;
    IF FOUND THEN
        IF v_old.secret IS DISTINCT FROM p_secret THEN
            RAISE EXCEPTION 'subscription % already exists with another secret', v_old.subscription_id
                USING ERRCODE = '42710';
        END IF;
        RETURN QUERY SELECT v_old.subscription_id, false;
        RETURN;
    END IF;
    RETURN QUERY
        INSERT INTO queue.subscription (pattern, pattern_regex, target_type, target, secret)
        VALUES (p_pattern, v_regex, p_type, p_target, p_secret)
        RETURNING queue.subscription.subscription_id, true;
END $$;

-- Removes a subscription and its pending deliveries. Returns whether it existed.
CREATE FUNCTION queue.unsubscribe(p_subscription_id bigint) RETURNS boolean
LANGUAGE sql AS $$
    WITH gone AS (DELETE FROM queue.subscription WHERE subscription_id = p_subscription_id RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM gone);
$$;

-- Publishes to a topic: every matching subscription gets the message, all in
-- the caller's transaction. Returns one row per subscription reached, with
-- the queue message id or the outbox delivery id.
CREATE FUNCTION queue.publish(p_topic text, p_body jsonb, p_headers jsonb DEFAULT NULL)
RETURNS TABLE (subscription_id bigint, target_type text, target text, id bigint)
LANGUAGE plpgsql AS $$
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
END $$;

-- Leases up to p_limit due deliveries for p_lease_seconds and counts the
-- attempt. A worker that dies mid-attempt loses only its lease.
CREATE FUNCTION queue.claim_deliveries(p_limit int, p_lease_seconds int)
RETURNS SETOF queue.outbox
LANGUAGE sql AS $$
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

-- Records an attempt's outcome: delivered, retry after p_retry_ms, or dead
-- once p_max_attempts attempts have failed.
CREATE FUNCTION queue.finish_delivery(p_delivery_id bigint, p_ok boolean, p_error text,
                                      p_max_attempts int, p_retry_ms bigint)
RETURNS text
LANGUAGE sql AS $$
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

-- When the next pending delivery is due (null when none).
CREATE FUNCTION queue.next_delivery_at() RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT min(next_attempt_at) FROM queue.outbox WHERE status = 'pending';
$$;
