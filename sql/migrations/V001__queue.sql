-- The message queue: one table per queue, FIFO message groups, visibility
-- timeouts, delayed messages and a dead-letter store. Every rule lives in the
-- functions below; callers never assemble queue SQL themselves.
--
-- Errors use three SQLSTATEs so the edge can translate them:
--   22023 (invalid_parameter_value) bad input, P0002 (no_data_found) unknown
--   queue, 42710 (duplicate_object) a conflicting queue already exists.

CREATE SCHEMA IF NOT EXISTS queue;

CREATE TABLE queue.queue_meta (
    queue_name          text PRIMARY KEY CHECK (queue_name ~ '^[a-z0-9_][a-z0-9_-]{0,47}$'),
    fifo                boolean NOT NULL,
    visibility_timeout  int NOT NULL CHECK (visibility_timeout BETWEEN 0 AND 43200),
    max_receives        int CHECK (max_receives IS NULL OR max_receives BETWEEN 1 AND 1000),
    created_at          timestamptz NOT NULL DEFAULT now()
);

-- Messages that were received more often than their queue allows.
CREATE TABLE queue.dead_letter (
    dead_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_name   text NOT NULL REFERENCES queue.queue_meta (queue_name) ON DELETE CASCADE,
    msg_id       bigint NOT NULL,
    group_id     text,
    read_ct      int NOT NULL,
    enqueued_at  timestamptz NOT NULL,
    dead_at      timestamptz NOT NULL DEFAULT now(),
    body         jsonb NOT NULL,
    headers      jsonb
);
CREATE INDEX dead_letter_queue_idx ON queue.dead_letter (queue_name, dead_id);
CREATE INDEX dead_letter_age_idx ON queue.dead_letter (dead_at);

-- What receive returns.
CREATE TYPE queue.message AS (
    msg_id       bigint,
    read_ct      int,
    enqueued_at  timestamptz,
    vt           timestamptz,
    body         jsonb,
    headers      jsonb,
    group_id     text
);

-- Raises 22023 unless p_name is a valid queue name whose derived identifiers
-- (table q_<name>, its indexes and identity sequence) all fit in 63 bytes.
CREATE FUNCTION queue.check_queue_name(p_name text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_name IS NULL OR p_name = '' THEN
        RAISE EXCEPTION 'queue name must not be empty' USING ERRCODE = '22023';
    END IF;
    IF length(p_name) > 48 THEN
        RAISE EXCEPTION 'queue name "%..." is longer than 48 characters', left(p_name, 48)
            USING ERRCODE = '22023';
    END IF;
    IF p_name !~ '^[a-z0-9_][a-z0-9_-]*$' THEN
        RAISE EXCEPTION 'queue name "%" may only contain a-z, 0-9, "_" and "-", and may not start with "-"', p_name
            USING ERRCODE = '22023';
    END IF;
    -- The longest derived identifier is the identity sequence q_<name>_msg_id_seq.
    IF octet_length('q_' || p_name || '_msg_id_seq') > 63 THEN
        RAISE EXCEPTION 'queue name "%" makes identifiers longer than 63 bytes', p_name
            USING ERRCODE = '22023';
    END IF;
END $$;

-- The queue's settings; raises P0002 when it does not exist.
CREATE FUNCTION queue.meta(p_name text) RETURNS queue.queue_meta
LANGUAGE plpgsql STABLE AS $$
DECLARE
    m queue.queue_meta;
BEGIN
    PERFORM queue.check_queue_name(p_name);
    SELECT * INTO m FROM queue.queue_meta WHERE queue_name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'queue "%" does not exist', p_name USING ERRCODE = 'P0002';
    END IF;
    RETURN m;
END $$;

-- Raises 22023 for a value outside [lo, hi].
CREATE FUNCTION queue.check_range(p_what text, p_value bigint, p_lo bigint, p_hi bigint) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_value IS NULL OR p_value < p_lo OR p_value > p_hi THEN
        RAISE EXCEPTION '% must be between % and %, got %', p_what, p_lo, p_hi, coalesce(p_value::text, 'null')
            USING ERRCODE = '22023';
    END IF;
END $$;

-- Serialises sends and head promotion within one message group.
CREATE FUNCTION queue.lock_group(p_name text, p_group text) RETURNS void
LANGUAGE sql AS $$
    SELECT pg_advisory_xact_lock(hashtextextended(p_name || chr(1) || p_group, 7));
$$;

-- Wakes listeners after commit: at most one NOTIFY per queue per transaction,
-- on one channel, carrying the queue name and never a message payload.
CREATE FUNCTION queue.notify_once(p_name text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_seen text := coalesce(current_setting('queue.notified', true), '');
BEGIN
    IF position('/' || p_name || '/' IN v_seen) > 0 THEN
        RETURN;
    END IF;
    PERFORM set_config('queue.notified', v_seen || '/' || p_name || '/', true);
    PERFORM pg_notify('queue_wakeup', p_name);
END $$;

-- Creates a queue. Returns true when created, false when an identical queue
-- already exists; raises 42710 when one exists with other settings.
CREATE FUNCTION queue.create_queue(
    p_name text,
    p_fifo boolean DEFAULT false,
    p_visibility_timeout int DEFAULT 30,
    p_max_receives int DEFAULT NULL
) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    m   queue.queue_meta;
    tbl text := 'q_' || p_name;
BEGIN
    PERFORM queue.check_queue_name(p_name);
    IF p_fifo IS NULL THEN
        RAISE EXCEPTION 'fifo must not be null' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('visibility timeout (seconds)', p_visibility_timeout, 0, 43200);
    IF p_max_receives IS NOT NULL THEN
        PERFORM queue.check_range('max receives', p_max_receives, 1, 1000);
    END IF;

    PERFORM pg_advisory_xact_lock(hashtextextended('create_queue' || chr(1) || p_name, 7));
    SELECT * INTO m FROM queue.queue_meta WHERE queue_name = p_name;
    IF FOUND THEN
        IF m.fifo = p_fifo AND m.visibility_timeout = p_visibility_timeout
           AND m.max_receives IS NOT DISTINCT FROM p_max_receives THEN
            RETURN false;
        END IF;
        RAISE EXCEPTION 'queue "%" already exists with other settings (fifo %, visibility timeout %, max receives %)',
            p_name, m.fifo, m.visibility_timeout, coalesce(m.max_receives::text, 'unlimited')
            USING ERRCODE = '42710';
    END IF;

    INSERT INTO queue.queue_meta (queue_name, fifo, visibility_timeout, max_receives)
    VALUES (p_name, p_fifo, p_visibility_timeout, p_max_receives);

    -- head: the message may be received now, subject to vt. In a FIFO group only
    -- the oldest message is a head; the others wait to be promoted.
    EXECUTE format($q$
        CREATE TABLE queue.%I (
            msg_id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            group_id     text,
            head         boolean NOT NULL,
            read_ct      int NOT NULL DEFAULT 0,
            enqueued_at  timestamptz NOT NULL,
            vt           timestamptz NOT NULL,
            body         jsonb NOT NULL,
            headers      jsonb
        ) WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 500)$q$, tbl);
    -- Receive walks only heads in vt order, so its cost does not grow with depth.
    EXECUTE format('CREATE INDEX %I ON queue.%I (vt, msg_id) WHERE head', tbl || '_ready', tbl);
    EXECUTE format('CREATE INDEX %I ON queue.%I (group_id, msg_id) WHERE group_id IS NOT NULL',
                   tbl || '_group', tbl);
    RETURN true;
END $$;

-- Drops a queue, its messages and its dead letters. Returns whether it existed.
CREATE FUNCTION queue.drop_queue(p_name text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM queue.check_queue_name(p_name);
    DELETE FROM queue.queue_meta WHERE queue_name = p_name;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS queue.%I', 'q_' || p_name);
    RETURN true;
END $$;

-- All queues, by name.
CREATE FUNCTION queue.list_queues() RETURNS SETOF queue.queue_meta
LANGUAGE sql STABLE AS $$
    SELECT * FROM queue.queue_meta ORDER BY queue_name;
$$;

-- Deletes every message of a queue (not its dead letters). Returns how many.
CREATE FUNCTION queue.purge_queue(p_name text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_count bigint;
BEGIN
    PERFORM queue.meta(p_name);
    EXECUTE format('DELETE FROM queue.%I', 'q_' || p_name);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END $$;

-- Raises 22023 unless the parts of a message are acceptable.
CREATE FUNCTION queue.check_message(p_body jsonb, p_headers jsonb, p_delay int, p_group_id text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_body IS NULL THEN
        RAISE EXCEPTION 'message body must not be null' USING ERRCODE = '22023';
    END IF;
    IF p_headers IS NOT NULL AND jsonb_typeof(p_headers) <> 'object' THEN
        RAISE EXCEPTION 'message headers must be a JSON object, got %', jsonb_typeof(p_headers)
            USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('delay (seconds)', p_delay, 0, 31536000);
    IF p_group_id IS NOT NULL AND (p_group_id = '' OR length(p_group_id) > 128) THEN
        RAISE EXCEPTION 'message group id must be 1 to 128 characters' USING ERRCODE = '22023';
    END IF;
END $$;

-- Sends one message; it becomes visible after p_delay seconds (or at
-- p_visible_at, for sub-second timers). In a FIFO
-- queue a message with a group id waits behind the older messages of its group.
-- Durable once the caller's transaction commits.
CREATE FUNCTION queue.send(
    p_name text,
    p_body jsonb,
    p_headers jsonb DEFAULT NULL,
    p_delay int DEFAULT 0,
    p_group_id text DEFAULT NULL,
    p_now timestamptz DEFAULT NULL,
    p_visible_at timestamptz DEFAULT NULL
) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    m      queue.queue_meta := queue.meta(p_name);
    v_now  timestamptz := coalesce(p_now, clock_timestamp());
    v_vt   timestamptz := coalesce(p_visible_at, v_now + make_interval(secs => p_delay));
    v_head boolean := true;
    v_id   bigint;
BEGIN
    PERFORM queue.check_message(p_body, p_headers, p_delay, p_group_id);
    IF m.fifo AND p_group_id IS NOT NULL THEN
        -- The lock comes before the look: a concurrent delete of the head either
        -- commits first (we then see the group empty) or promotes us after.
        PERFORM queue.lock_group(p_name, p_group_id);
        EXECUTE format('SELECT NOT EXISTS (SELECT 1 FROM queue.%I WHERE group_id = $1)', 'q_' || p_name)
            INTO v_head USING p_group_id;
    END IF;
    EXECUTE format('INSERT INTO queue.%I (group_id, head, enqueued_at, vt, body, headers)
                    VALUES ($1, $2, $3, $4, $5, $6) RETURNING msg_id', 'q_' || p_name)
        INTO v_id
        USING p_group_id, v_head, v_now, v_vt, p_body, p_headers;
    IF v_head AND v_vt <= v_now THEN
        PERFORM queue.notify_once(p_name);
    END IF;
    RETURN v_id;
END $$;

-- Sends a JSON array of {body, headers?, delaySeconds?, groupId?} in one
-- transaction; returns the ids in input order. Nothing is sent if any is bad.
CREATE FUNCTION queue.send_batch(p_name text, p_messages jsonb, p_now timestamptz DEFAULT NULL)
RETURNS TABLE (msg_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    v_msg   jsonb;
    v_delay int;
BEGIN
    PERFORM queue.meta(p_name);
    IF p_messages IS NULL OR jsonb_typeof(p_messages) <> 'array' THEN
        RAISE EXCEPTION 'messages must be a JSON array' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('batch size', jsonb_array_length(p_messages), 1, 1000);
    FOR v_msg IN SELECT value FROM jsonb_array_elements(p_messages) LOOP
        IF jsonb_typeof(v_msg) <> 'object' OR NOT v_msg ? 'body' THEN
            RAISE EXCEPTION 'each message must be an object with a body' USING ERRCODE = '22023';
        END IF;
        IF v_msg ? 'delaySeconds' AND jsonb_typeof(v_msg -> 'delaySeconds') <> 'number' THEN
            RAISE EXCEPTION 'delaySeconds must be a number' USING ERRCODE = '22023';
        END IF;
        IF v_msg ? 'groupId' AND jsonb_typeof(v_msg -> 'groupId') NOT IN ('string', 'null') THEN
            RAISE EXCEPTION 'groupId must be a string' USING ERRCODE = '22023';
        END IF;
        IF v_msg ? 'delaySeconds' AND (v_msg ->> 'delaySeconds')::numeric NOT BETWEEN 0 AND 31536000 THEN
            RAISE EXCEPTION 'delay (seconds) must be between 0 and 31536000, got %', v_msg ->> 'delaySeconds'
                USING ERRCODE = '22023';
        END IF;
        v_delay := coalesce((v_msg ->> 'delaySeconds')::numeric::int, 0);
        msg_id := queue.send(p_name, v_msg -> 'body', nullif(v_msg -> 'headers', 'null'::jsonb),
                             v_delay, v_msg ->> 'groupId', p_now);
        RETURN NEXT;
    END LOOP;
END $$;

-- Makes the oldest waiting message of a FIFO group its head, after the
-- previous head left. Notifies when the new head is visible now.
CREATE FUNCTION queue.promote_next(p_name text, p_group text, p_now timestamptz DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_vt timestamptz;
BEGIN
    PERFORM queue.lock_group(p_name, p_group);
    EXECUTE format($q$
        UPDATE queue.%1$I SET head = true
         WHERE msg_id = (SELECT msg_id FROM queue.%1$I WHERE group_id = $1 ORDER BY msg_id LIMIT 1)
           AND NOT head
        RETURNING vt$q$, 'q_' || p_name)
        INTO v_vt USING p_group;
    IF v_vt IS NOT NULL AND v_vt <= coalesce(p_now, clock_timestamp()) THEN
        PERFORM queue.notify_once(p_name);
    END IF;
END $$;

-- Receives up to p_qty visible messages and hides them for p_vt seconds (the
-- queue's default when null); read_ct counts receives. Only group heads are
-- candidates, so a FIFO group with a message in flight yields nothing until
-- that message is deleted or its visibility expires. A message already
-- received max_receives times moves to queue.dead_letter instead.
-- p_matcher, when given, keeps only messages whose body contains it (@>).
CREATE FUNCTION queue.receive(
    p_name text,
    p_qty int DEFAULT 1,
    p_vt int DEFAULT NULL,
    p_matcher jsonb DEFAULT NULL,
    p_now timestamptz DEFAULT NULL
) RETURNS SETOF queue.message
LANGUAGE plpgsql AS $$
DECLARE
    m     queue.queue_meta := queue.meta(p_name);
    v_now timestamptz := coalesce(p_now, clock_timestamp());
    v_vt  int := coalesce(p_vt, m.visibility_timeout);
    r     record;
BEGIN
    PERFORM queue.check_range('receive count', p_qty, 1, 1000);
    PERFORM queue.check_range('visibility timeout (seconds)', v_vt, 0, 43200);
    IF m.max_receives IS NULL THEN
        RETURN QUERY EXECUTE format($q$
            WITH cand AS (
                SELECT msg_id FROM queue.%1$I
                 WHERE head AND vt <= $1 AND ($4::jsonb IS NULL OR body @> $4)
                 ORDER BY vt, msg_id
                 LIMIT $2
                 FOR UPDATE SKIP LOCKED
            ), upd AS (
                UPDATE queue.%1$I q
                   SET vt = $1 + make_interval(secs => $3), read_ct = q.read_ct + 1
                  FROM cand WHERE q.msg_id = cand.msg_id
                RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.body, q.headers, q.group_id
            )
            SELECT * FROM upd ORDER BY msg_id$q$, 'q_' || p_name)
            USING v_now, p_qty, v_vt, p_matcher;
        RETURN;
    END IF;

    FOR r IN EXECUTE format($q$
        WITH cand AS (
            SELECT msg_id FROM queue.%1$I
             WHERE head AND vt <= $1 AND ($4::jsonb IS NULL OR body @> $4)
             ORDER BY vt, msg_id
             LIMIT $2
             FOR UPDATE SKIP LOCKED
        ), dead AS (
            DELETE FROM queue.%1$I q USING cand
             WHERE q.msg_id = cand.msg_id AND q.read_ct >= $5
            RETURNING q.*
        ), moved AS (
            INSERT INTO queue.dead_letter (queue_name, msg_id, group_id, read_ct, enqueued_at, body, headers)
            SELECT $6, msg_id, group_id, read_ct, enqueued_at, body, headers FROM dead
        ), upd AS (
            UPDATE queue.%1$I q
               SET vt = $1 + make_interval(secs => $3), read_ct = q.read_ct + 1
              FROM cand WHERE q.msg_id = cand.msg_id AND q.read_ct < $5
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.body, q.headers, q.group_id
        )
        SELECT false AS dead, u.* FROM upd u
        UNION ALL
        SELECT true, d.msg_id, d.read_ct, d.enqueued_at, d.vt, d.body, d.headers, d.group_id FROM dead d
        ORDER BY msg_id$q$, 'q_' || p_name)
        USING v_now, p_qty, v_vt, p_matcher, m.max_receives, p_name
    LOOP
        IF r.dead THEN
            IF m.fifo AND r.group_id IS NOT NULL THEN
                PERFORM queue.promote_next(p_name, r.group_id, v_now);
            END IF;
        ELSE
            RETURN NEXT (r.msg_id, r.read_ct, r.enqueued_at, r.vt, r.body, r.headers, r.group_id)::queue.message;
        END IF;
    END LOOP;
END $$;

-- receive for FIFO queues: raises 22023 when the queue is not FIFO, so a
-- consumer that relies on per-group order cannot silently lose it.
CREATE FUNCTION queue.receive_fifo(
    p_name text,
    p_qty int DEFAULT 1,
    p_vt int DEFAULT NULL,
    p_matcher jsonb DEFAULT NULL,
    p_now timestamptz DEFAULT NULL
) RETURNS SETOF queue.message
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT (queue.meta(p_name)).fifo THEN
        RAISE EXCEPTION 'queue "%" is not a FIFO queue', p_name USING ERRCODE = '22023';
    END IF;
    RETURN QUERY SELECT * FROM queue.receive(p_name, p_qty, p_vt, p_matcher, p_now);
END $$;

-- Deletes one message (the ack). Returns whether it existed. Deleting a FIFO
-- group's head lets the next message of the group through.
CREATE FUNCTION queue.delete(p_name text, p_msg_id bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    m       queue.queue_meta := queue.meta(p_name);
    v_group text;
    v_head  boolean;
BEGIN
    EXECUTE format('DELETE FROM queue.%I WHERE msg_id = $1 RETURNING group_id, head', 'q_' || p_name)
        INTO v_group, v_head USING p_msg_id;
    IF v_head IS NULL THEN
        RETURN false;
    END IF;
    IF m.fifo AND v_head AND v_group IS NOT NULL THEN
        PERFORM queue.promote_next(p_name, v_group);
    END IF;
    RETURN true;
END $$;

-- Deletes many messages; says for each id whether it existed.
CREATE FUNCTION queue.delete(p_name text, p_msg_ids bigint[])
RETURNS TABLE (msg_id bigint, deleted boolean)
LANGUAGE plpgsql AS $$
DECLARE
    m         queue.queue_meta := queue.meta(p_name);
    r         record;
    v_deleted bigint[] := '{}';
BEGIN
    IF p_msg_ids IS NULL THEN
        RAISE EXCEPTION 'message ids must not be null' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('batch size', cardinality(p_msg_ids), 0, 1000);
    FOR r IN EXECUTE format('DELETE FROM queue.%I WHERE msg_id = ANY($1) RETURNING msg_id, group_id, head',
                            'q_' || p_name) USING p_msg_ids
    LOOP
        v_deleted := v_deleted || r.msg_id;
        IF m.fifo AND r.head AND r.group_id IS NOT NULL THEN
            PERFORM queue.promote_next(p_name, r.group_id);
        END IF;
    END LOOP;
    RETURN QUERY SELECT i, i = ANY (v_deleted) FROM unnest(p_msg_ids) AS i;
END $$;

-- Sets a message to become visible p_vt seconds from now (0: at once).
-- Returns the new visibility time, or null when the message does not exist.
CREATE FUNCTION queue.change_visibility(p_name text, p_msg_id bigint, p_vt int, p_now timestamptz DEFAULT NULL)
RETURNS timestamptz
LANGUAGE plpgsql AS $$
DECLARE
    v_now  timestamptz := coalesce(p_now, clock_timestamp());
    v_vt   timestamptz;
    v_head boolean;
BEGIN
    PERFORM queue.meta(p_name);
    PERFORM queue.check_range('visibility timeout (seconds)', p_vt, 0, 31536000);
    EXECUTE format('UPDATE queue.%I SET vt = $2 WHERE msg_id = $1 RETURNING vt, head', 'q_' || p_name)
        INTO v_vt, v_head USING p_msg_id, v_now + make_interval(secs => p_vt);
    IF v_head AND p_vt = 0 THEN
        PERFORM queue.notify_once(p_name);
    END IF;
    RETURN v_vt;
END $$;

-- How many times a message has been received; null when it does not exist.
CREATE FUNCTION queue.read_ct(p_name text, p_msg_id bigint) RETURNS int
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_ct int;
BEGIN
    PERFORM queue.meta(p_name);
    EXECUTE format('SELECT read_ct FROM queue.%I WHERE msg_id = $1', 'q_' || p_name) INTO v_ct USING p_msg_id;
    RETURN v_ct;
END $$;

-- When the next message of a queue becomes receivable (null when empty):
-- a waiter's timer for delayed messages and expiring visibility.
CREATE FUNCTION queue.next_visible_at(p_name text) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_vt timestamptz;
BEGIN
    PERFORM queue.meta(p_name);
    EXECUTE format('SELECT vt FROM queue.%I WHERE head ORDER BY vt, msg_id LIMIT 1', 'q_' || p_name) INTO v_vt;
    RETURN v_vt;
END $$;

-- Depth and its parts for one queue. Counts scan the queue: for monitoring,
-- not for hot paths.
CREATE FUNCTION queue.queue_metrics(p_name text, p_now timestamptz DEFAULT NULL)
RETURNS TABLE (
    queue_name          text,
    depth               bigint,
    visible             bigint,
    in_flight           bigint,
    delayed             bigint,
    oldest_age_seconds  double precision,
    dead_lettered       bigint
)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_now timestamptz := coalesce(p_now, clock_timestamp());
BEGIN
    PERFORM queue.meta(p_name);
    RETURN QUERY EXECUTE format($q$
        SELECT $1::text,
               count(*),
               count(*) FILTER (WHERE head AND vt <= $2),
               count(*) FILTER (WHERE head AND vt > $2 AND read_ct > 0),
               count(*) FILTER (WHERE vt > $2 AND read_ct = 0),
               coalesce(extract(epoch FROM $2 - min(enqueued_at))::double precision, 0),
               (SELECT count(*) FROM queue.dead_letter d WHERE d.queue_name = $1)
          FROM queue.%I$q$, 'q_' || p_name)
        USING p_name, v_now;
END $$;

-- Metrics of every queue.
CREATE FUNCTION queue.all_queue_metrics(p_now timestamptz DEFAULT NULL)
RETURNS TABLE (
    queue_name          text,
    depth               bigint,
    visible             bigint,
    in_flight           bigint,
    delayed             bigint,
    oldest_age_seconds  double precision,
    dead_lettered       bigint
)
LANGUAGE sql STABLE AS $$
    SELECT m.* FROM queue.queue_meta q, LATERAL queue.queue_metrics(q.queue_name, p_now) m ORDER BY q.queue_name;
$$;

-- Dead letters of a queue, oldest first, after p_after (a dead_id cursor).
CREATE FUNCTION queue.list_dead_letters(p_name text, p_limit int DEFAULT 100, p_after bigint DEFAULT 0)
RETURNS SETOF queue.dead_letter
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM queue.meta(p_name);
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    RETURN QUERY SELECT * FROM queue.dead_letter d
                  WHERE d.queue_name = p_name AND d.dead_id > coalesce(p_after, 0)
                  ORDER BY d.dead_id LIMIT p_limit;
END $$;

-- Sends dead letters back to their queue as new messages (read_ct 0, at the
-- tail of their group), all of them or those with the given dead_ids.
-- Returns how many went back.
CREATE FUNCTION queue.redrive_dead_letters(p_name text, p_dead_ids bigint[] DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    d       queue.dead_letter;
    v_count bigint := 0;
BEGIN
    PERFORM queue.meta(p_name);
    FOR d IN WITH gone AS (
                 DELETE FROM queue.dead_letter x
                  WHERE x.queue_name = p_name AND (p_dead_ids IS NULL OR x.dead_id = ANY (p_dead_ids))
                 RETURNING x.*)
             SELECT * FROM gone ORDER BY dead_id
    LOOP
        PERFORM queue.send(p_name, d.body, d.headers, 0, d.group_id);
        v_count := v_count + 1;
    END LOOP;
    RETURN v_count;
END $$;
