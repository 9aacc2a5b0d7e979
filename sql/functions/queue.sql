-- Queues: create and drop, send, receive (standard and FIFO), delete, visibility, metrics and dead
-- letters. Each queue is a table queue.q_<name>; see sql/README.md.

-- Creates a queue and its table; true when created, false when an identical queue exists, 42710
-- when one exists with other settings. A workflow's queue __wf_<name> only with the engine's
-- settings (FIFO, visibility timeout 60, no max receives; workflow_start creates it): WF001
-- otherwise.
CREATE OR REPLACE FUNCTION queue.create_queue(p_name text, p_fifo boolean DEFAULT false, p_visibility_timeout integer DEFAULT 30, p_max_receives integer DEFAULT NULL::integer)
 RETURNS boolean
 LANGUAGE plpgsql
AS $$
DECLARE
    m   queue.queue_meta;
    tbl text := 'q_' || p_name;
BEGIN
    PERFORM queue.check_queue_name(p_name);
    IF starts_with(p_name, '__wf_')
       AND NOT (p_fifo AND p_visibility_timeout = 60 AND p_max_receives IS NULL) THEN
        PERFORM queue.check_not_workflow_queue(p_name, 'settings other than the engine''s');
    END IF;
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

-- Drops a queue, its messages and its dead letters; returns whether it existed. WF001 for a
-- workflow's queue.
CREATE OR REPLACE FUNCTION queue.drop_queue(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queue.check_queue_name(p_name);
    PERFORM queue.check_not_workflow_queue(p_name, 'drop');
    DELETE FROM queue.queue_meta WHERE queue_name = p_name;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS queue.%I', 'q_' || p_name);
    RETURN true;
END $$;

-- Deletes every message of a queue (not its dead letters); returns how many. WF001 for a
-- workflow's queue.
CREATE OR REPLACE FUNCTION queue.purge_queue(p_name text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $$
DECLARE
    v_count bigint;
BEGIN
    PERFORM queue.check_not_workflow_queue(p_name, 'purge');
    PERFORM queue.meta(p_name);
    EXECUTE format('DELETE FROM queue.%I', 'q_' || p_name);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END $$;

-- All queues, by name.
CREATE OR REPLACE FUNCTION queue.list_queues()
 RETURNS SETOF queue.queue_meta
 LANGUAGE sql
 STABLE
AS $$
    SELECT * FROM queue.queue_meta ORDER BY queue_name;
$$;

-- Puts one message on a queue, whoever owns it (send's body for every other queue; the engine's
-- own sends to workflow queues); in a FIFO group it becomes the head only when the group is
-- empty. Notifies when it is visible now.
CREATE OR REPLACE FUNCTION queue.enqueue(p_name text, p_body jsonb, p_headers jsonb DEFAULT NULL::jsonb, p_delay integer DEFAULT 0, p_group_id text DEFAULT NULL::text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_visible_at timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
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
        EXECUTE queue.prepared_sql('q_empty_' || p_name, 'q_' || p_name,
            'SELECT NOT EXISTS (SELECT 1 FROM queue.%I WHERE group_id = $1)',
            'text', format('%L', p_group_id))
            INTO v_head;
    END IF;
    EXECUTE queue.prepared_sql('q_send_' || p_name, 'q_' || p_name, $q$
        INSERT INTO queue.%I (group_id, head, enqueued_at, vt, body, headers)
        VALUES ($1, $2, $3, $4, $5, $6) RETURNING msg_id$q$,
        'text, boolean, timestamptz, timestamptz, jsonb, jsonb',
        format('%L, %L, %L, %L, %L, %L', p_group_id, v_head, v_now, v_vt, p_body, p_headers))
        INTO v_id;
    IF v_head AND v_vt <= v_now THEN
        PERFORM queue.notify_once(p_name);
    END IF;
    RETURN v_id;
END $$;

-- A send to a workflow's queue __wf_<name>: starts a run with the body as input (idempotent by the
-- headers' idempotencyKey, as a start is) and returns its run id; 22023 for a bad workflow name, a
-- delay or a group id. Other headers are not kept.
CREATE OR REPLACE FUNCTION queue.send_to_workflow(p_queue text, p_body jsonb, p_headers jsonb, p_delay integer, p_group_id text, p_visible_at timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_name text := substr(p_queue, 6);
    v_run  bigint;
BEGIN
    IF NOT starts_with(p_queue, '__wf_') THEN
        RAISE EXCEPTION 'queue "%" is not a workflow''s queue (__wf_<name>)', p_queue USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_workflow_name(v_name);
    PERFORM queue.check_message(p_body, p_headers, p_delay, p_group_id);
    IF p_delay <> 0 OR p_visible_at IS NOT NULL OR p_group_id IS NOT NULL THEN
        RAISE EXCEPTION 'a send to queue "%" starts a run of workflow "%" at once: it takes no delay and no group id (each run is a group of its own)',
            p_queue, v_name USING ERRCODE = '22023';
    END IF;
    SELECT w.run_id INTO v_run
      FROM queue.workflow_start(v_name, p_body, NULL, p_headers ->> 'idempotencyKey', NULL, 365, NULL,
                                queue.workflow_start_headers(p_headers)) w;
    RETURN v_run;
END $$;

-- The start fields a send to a workflow's queue carries in its headers: concurrencyKey, priority,
-- delayMs or startAt, deadlineMs or deadlineAt (numbers may come as strings of digits); null when
-- it carries none. workflow_start checks them and names the field.
CREATE OR REPLACE FUNCTION queue.workflow_start_headers(p_headers jsonb)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT nullif(jsonb_object_agg(f, CASE WHEN f IN ('priority', 'delayMs', 'deadlineMs')
                                                AND jsonb_typeof(p_headers -> f) = 'string'
                                                AND p_headers ->> f ~ '^-?[0-9]{1,18}$'
                                           THEN to_jsonb((p_headers ->> f)::numeric)
                                           ELSE p_headers -> f END),
                  '{}'::jsonb)
      FROM unnest(ARRAY['concurrencyKey', 'priority', 'delayMs', 'startAt', 'deadlineMs', 'deadlineAt']) f
     WHERE jsonb_typeof(p_headers) = 'object' AND p_headers -> f IS NOT NULL
       AND jsonb_typeof(p_headers -> f) <> 'null';
$$;

-- Sends one message; in a FIFO group it becomes the head only when the group is empty. Notifies
-- when it is visible now. A send to a workflow's queue __wf_<name> starts a run instead
-- (send_to_workflow) and returns the run id in place of a message id.
CREATE OR REPLACE FUNCTION queue.send(p_name text, p_body jsonb, p_headers jsonb DEFAULT NULL::jsonb, p_delay integer DEFAULT 0, p_group_id text DEFAULT NULL::text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_visible_at timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS bigint
 LANGUAGE sql
AS $$
    -- One CASE the planner inlines into the caller's statement, so the prefix test is all an
    -- ordinary send pays (a PL/pgSQL wrapper here cost some 10 % of a send).
    SELECT CASE WHEN starts_with(p_name, '__wf_')
                THEN queue.send_to_workflow(p_name, p_body, p_headers, p_delay, p_group_id, p_visible_at)
                ELSE queue.enqueue(p_name, p_body, p_headers, p_delay, p_group_id, p_now, p_visible_at) END;
$$;

-- Sends a JSON array of messages in one transaction and returns their ids in input order; nothing
-- is sent if one is bad. To a workflow's queue each message starts a run (see send).
CREATE OR REPLACE FUNCTION queue.send_batch(p_name text, p_messages jsonb, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(msg_id bigint)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_msg   jsonb;
    v_delay int;
BEGIN
    -- A workflow's queue need not exist yet: the first start creates it.
    IF NOT starts_with(p_name, '__wf_') THEN
        PERFORM queue.meta(p_name);
    END IF;
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

-- Makes the oldest message of a FIFO group its head after the head left; notifies when it is
-- visible now.
CREATE OR REPLACE FUNCTION queue.promote_next(p_name text, p_group text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
AS $$
DECLARE
    v_vt timestamptz;
BEGIN
    PERFORM queue.lock_group(p_name, p_group);
    EXECUTE queue.prepared_sql('q_promote_' || p_name, 'q_' || p_name, $q$
        UPDATE queue.%1$I SET head = true
         WHERE msg_id = (SELECT msg_id FROM queue.%1$I WHERE group_id = $1 ORDER BY msg_id LIMIT 1)
           AND NOT head
        RETURNING vt$q$,
        'text', format('%L', p_group))
        INTO v_vt;
    IF v_vt IS NOT NULL AND v_vt <= coalesce(p_now, clock_timestamp()) THEN
        PERFORM queue.notify_once(p_name);
    END IF;
END $$;

-- Leases up to p_qty visible messages for p_vt seconds, oldest visibility first; dead-letters those
-- past max receives.
CREATE OR REPLACE FUNCTION queue.receive(p_name text, p_qty integer DEFAULT 1, p_vt integer DEFAULT NULL::integer, p_matcher jsonb DEFAULT NULL::jsonb, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS SETOF queue.message
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    m     queue.queue_meta := queue.meta(p_name);
    v_now timestamptz := coalesce(p_now, clock_timestamp());
    v_vt  int := coalesce(p_vt, m.visibility_timeout);
    r     record;
    v_skip text := '';
BEGIN
    PERFORM queue.check_range('receive count', p_qty, 1, 1000);
    PERFORM queue.check_range('visibility timeout (seconds)', v_vt, 0, 43200);
    -- Paused groups (queue.group_pause, operations.sql) are passed by; only a queue that has one
    -- (its count is on the queue's row) pays for looking at each candidate's group.
    IF m.paused_groups > 0 THEN
        v_skip := ' AND NOT EXISTS (SELECT 1 FROM queue.group_pause gp'
                  ' WHERE gp.queue_name = $6 AND gp.group_id = c.group_id)';
    END IF;
    IF m.max_receives IS NULL AND v_skip = '' THEN
        RETURN QUERY EXECUTE queue.prepared_sql('q_recv_' || p_name, 'q_' || p_name, $q$
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
            SELECT * FROM upd ORDER BY msg_id$q$,
            'timestamptz, int, int, jsonb',
            format('%L, %L, %L, %L', v_now, p_qty, v_vt, p_matcher));
        RETURN;
    END IF;

    FOR r IN EXECUTE format($q$
        WITH cand AS (
            SELECT c.msg_id FROM queue.%1$I c
             WHERE c.head AND c.vt <= $1 AND ($4::jsonb IS NULL OR c.body @> $4)%2$s
             ORDER BY c.vt, c.msg_id
             LIMIT $2
             FOR UPDATE SKIP LOCKED
        ), dead AS (
            DELETE FROM queue.%1$I q USING cand
             WHERE q.msg_id = cand.msg_id AND q.read_ct >= coalesce($5, 2147483647)
            RETURNING q.*
        ), moved AS (
            INSERT INTO queue.dead_letter (queue_name, msg_id, group_id, read_ct, enqueued_at, body, headers)
            SELECT $6, msg_id, group_id, read_ct, enqueued_at, body, headers FROM dead
        ), upd AS (
            UPDATE queue.%1$I q
               SET vt = $1 + make_interval(secs => $3), read_ct = q.read_ct + 1
              FROM cand WHERE q.msg_id = cand.msg_id AND q.read_ct < coalesce($5, 2147483647)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.body, q.headers, q.group_id
        )
        SELECT false AS dead, u.* FROM upd u
        UNION ALL
        SELECT true, d.msg_id, d.read_ct, d.enqueued_at, d.vt, d.body, d.headers, d.group_id FROM dead d
        ORDER BY msg_id$q$, 'q_' || p_name, v_skip)
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

-- receive for FIFO queues: only group heads are handed out, so one message per group is in flight;
-- 22023 on a queue that is not FIFO, WF001 on a workflow's queue.
CREATE OR REPLACE FUNCTION queue.receive_fifo(p_name text, p_qty integer DEFAULT 1, p_vt integer DEFAULT NULL::integer, p_matcher jsonb DEFAULT NULL::jsonb, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS SETOF queue.message
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    PERFORM queue.check_not_workflow_queue(p_name, 'receive');
    IF NOT (queue.meta(p_name)).fifo THEN
        RAISE EXCEPTION 'queue "%" is not a FIFO queue', p_name USING ERRCODE = '22023';
    END IF;
    RETURN QUERY SELECT * FROM queue.receive(p_name, p_qty, p_vt, p_matcher, p_now);
END $$;

-- Deletes a message (or several), promoting the next message of its FIFO group; reports what was
-- deleted.
CREATE OR REPLACE FUNCTION queue.delete(p_name text, p_msg_id bigint)
 RETURNS boolean
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    m       queue.queue_meta := queue.meta(p_name);
    v_group text;
    v_head  boolean;
BEGIN
    EXECUTE queue.prepared_sql('q_del_' || p_name, 'q_' || p_name,
        'DELETE FROM queue.%I WHERE msg_id = $1 RETURNING group_id, head',
        'bigint', format('%L', p_msg_id))
        INTO v_group, v_head;
    IF v_head IS NULL THEN
        RETURN false;
    END IF;
    IF m.fifo AND v_head AND v_group IS NOT NULL THEN
        PERFORM queue.promote_next(p_name, v_group);
    END IF;
    RETURN true;
END $$;

-- Deletes a message (or several), promoting the next message of its FIFO group; reports what was
-- deleted.
CREATE OR REPLACE FUNCTION queue.delete(p_name text, p_msg_ids bigint[])
 RETURNS TABLE(msg_id bigint, deleted boolean)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
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

-- Makes a message visible p_vt seconds from now (0: at once); returns the new visibility time, null
-- when the message is gone.
CREATE OR REPLACE FUNCTION queue.change_visibility(p_name text, p_msg_id bigint, p_vt integer, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
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

-- How many times a message has been received (null when it is gone).
CREATE OR REPLACE FUNCTION queue.read_ct(p_name text, p_msg_id bigint)
 RETURNS integer
 LANGUAGE plpgsql
AS $$
DECLARE
    v_ct int;
BEGIN
    PERFORM queue.meta(p_name);
    EXECUTE queue.prepared_sql('q_rct_' || p_name, 'q_' || p_name,
        'SELECT read_ct FROM queue.%I WHERE msg_id = $1',
        'bigint', format('%L', p_msg_id))
        INTO v_ct;
    RETURN v_ct;
END $$;

-- The earliest future visibility time of a head in the queue (when a waiting poll should look
-- again); a parked message (vt parked_vt(), see flow_control.sql) is not one.
CREATE OR REPLACE FUNCTION queue.next_visible_at(p_name text)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_vt timestamptz;
BEGIN
    PERFORM queue.meta(p_name);
    EXECUTE queue.prepared_sql('q_nextvis_' || p_name, 'q_' || p_name,
        'SELECT vt FROM queue.%I WHERE head AND vt > $1 AND vt < queue.parked_vt() ORDER BY vt, msg_id LIMIT 1',
        'timestamptz', format('%L', clock_timestamp()))
        INTO v_vt;
    RETURN v_vt;
END $$;

-- Depth, visible, in flight, delayed, oldest age and dead letters of one queue (scans the queue:
-- for monitoring).
CREATE OR REPLACE FUNCTION queue.queue_metrics(p_name text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(queue_name text, depth bigint, visible bigint, in_flight bigint, delayed bigint, oldest_age_seconds double precision, dead_lettered bigint)
 LANGUAGE plpgsql
 STABLE
AS $$
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

-- queue_metrics for every queue.
CREATE OR REPLACE FUNCTION queue.all_queue_metrics(p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(queue_name text, depth bigint, visible bigint, in_flight bigint, delayed bigint, oldest_age_seconds double precision, dead_lettered bigint)
 LANGUAGE sql
 STABLE
AS $$
    SELECT m.* FROM queue.queue_meta q, LATERAL queue.queue_metrics(q.queue_name, p_now) m ORDER BY q.queue_name;
$$;

-- A queue's dead letters, oldest first, after a dead_id cursor.
CREATE OR REPLACE FUNCTION queue.list_dead_letters(p_name text, p_limit integer DEFAULT 100, p_after bigint DEFAULT 0)
 RETURNS SETOF queue.dead_letter
 LANGUAGE plpgsql
 STABLE
AS $$
BEGIN
    PERFORM queue.meta(p_name);
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    RETURN QUERY SELECT * FROM queue.dead_letter d
                  WHERE d.queue_name = p_name AND d.dead_id > coalesce(p_after, 0)
                  ORDER BY d.dead_id LIMIT p_limit;
END $$;

-- Sends dead letters back to their queue as new messages at the tail of their group; returns how
-- many went back. WF001 for a workflow's queue.
CREATE OR REPLACE FUNCTION queue.redrive_dead_letters(p_name text, p_dead_ids bigint[] DEFAULT NULL::bigint[])
 RETURNS bigint
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    d       queue.dead_letter;
    v_count bigint := 0;
BEGIN
    PERFORM queue.check_not_workflow_queue(p_name, 'redrive');
    PERFORM queue.meta(p_name);
    FOR d IN WITH gone AS (
                 DELETE FROM queue.dead_letter x
                  WHERE x.queue_name = p_name AND (p_dead_ids IS NULL OR x.dead_id = ANY (p_dead_ids))
                 RETURNING x.*)
             SELECT * FROM gone ORDER BY dead_id
    LOOP
        PERFORM queue.enqueue(p_name, d.body, d.headers, 0, d.group_id);
        v_count := v_count + 1;
    END LOOP;
    RETURN v_count;
END $$;
