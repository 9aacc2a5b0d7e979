-- The queue's hot statements (send's insert, receive, the single delete)
-- are prepared once per session instead of planned on every call, as the
-- workflow paths already are. A receive planned per call cost about twice
-- its execution.

-- prepared_sql remembers what this session prepared in a session setting, so
-- the common case is a lookup instead of a scan of pg_prepared_statements
-- (which lists every statement of the session, the driver's included). A
-- rolled-back transaction also rolls the setting back while PREPARE stays,
-- so a miss is still checked against the catalogue before preparing.
CREATE OR REPLACE FUNCTION queue.prepared_sql(p_stmt text, p_tbl text, p_sql text, p_types text, p_args text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_seen text := coalesce(current_setting('queue.prepared', true), '');
BEGIN
    IF position('/' || p_stmt || '/' IN v_seen) = 0 THEN
        IF NOT EXISTS (SELECT 1 FROM pg_prepared_statements WHERE name = p_stmt) THEN
            EXECUTE format('PREPARE %I (%s) AS ', p_stmt, p_types) || format(p_sql, p_tbl);
        END IF;
        PERFORM set_config('queue.prepared', v_seen || '/' || p_stmt || '/', false);
    END IF;
    RETURN format('EXECUTE %I (%s)', p_stmt, p_args);
END $$;

CREATE OR REPLACE FUNCTION queue.send(
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

CREATE OR REPLACE FUNCTION queue.receive(
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

CREATE OR REPLACE FUNCTION queue.delete(p_name text, p_msg_id bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
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
