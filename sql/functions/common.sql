-- Checks and helpers every area uses: name and range checks, queue settings, group locks, wake-
-- ups, per-session prepared statements, receipts.

-- Raises 22023 when a value lies outside [lo, hi], naming what it is.
CREATE OR REPLACE FUNCTION queue.check_range(p_what text, p_value bigint, p_lo bigint, p_hi bigint)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF p_value IS NULL OR p_value < p_lo OR p_value > p_hi THEN
        RAISE EXCEPTION '% must be between % and %, got %', p_what, p_lo, p_hi, coalesce(p_value::text, 'null')
            USING ERRCODE = '22023';
    END IF;
END $$;

-- Raises 22023 unless the name is a valid queue name whose derived identifiers (q_<name>, its
-- indexes, its sequence) fit in 63 bytes.
CREATE OR REPLACE FUNCTION queue.check_queue_name(p_name text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
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

-- Raises 22023 unless body, headers, delay and group id make an acceptable message.
CREATE OR REPLACE FUNCTION queue.check_message(p_body jsonb, p_headers jsonb, p_delay integer, p_group_id text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
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

-- Raises 22023 unless the text is a topic (p_pattern false) or a subscription pattern (true).
CREATE OR REPLACE FUNCTION queue.check_topic(p_topic text, p_pattern boolean)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
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

-- Raises 22023 unless the name is a valid workflow name (its queue __wf_<name> is a valid queue
-- name).
CREATE OR REPLACE FUNCTION queue.check_workflow_name(p_name text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF p_name IS NULL OR p_name !~ '^[a-z0-9_][a-z0-9_-]{0,42}$' THEN
        RAISE EXCEPTION 'workflow name "%" must be 1 to 43 characters of a-z, 0-9, "_" and "-", not starting with "-"',
            left(coalesce(p_name, ''), 64) USING ERRCODE = '22023';
    END IF;
END $$;

-- Raises WF001 when the queue is a workflow's queue __wf_<name>, which belongs to the engine: the
-- queue API may send to it (a send starts a run) but do nothing else (p_action: "purge", ...).
CREATE OR REPLACE FUNCTION queue.check_not_workflow_queue(p_name text, p_action text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF starts_with(p_name, '__wf_') THEN
        RAISE EXCEPTION 'queue "%" belongs to workflow "%": it takes sends (each starts a run) but no %',
            p_name, substr(p_name, 6), p_action USING ERRCODE = 'WF001';
    END IF;
END $$;

-- Whether the text is a valid step name: 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-".
CREATE OR REPLACE FUNCTION queue.is_step_name(p_step text)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT coalesce(p_step ~ '^[a-zA-Z0-9._-]{1,128}$', false)
$$;

-- Whether the text is a step kind a journal row can have.
CREATE OR REPLACE FUNCTION queue.is_step_kind(p_kind text)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT coalesce(p_kind IN ('run', 'sleep', 'wait', 'child'), false)
$$;

-- Raises 22023 unless the text is a valid step name.
CREATE OR REPLACE FUNCTION queue.check_step_name(p_step text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF NOT queue.is_step_name(p_step) THEN
        RAISE EXCEPTION 'step name "%" must be 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-"',
            left(coalesce(p_step, ''), 140) USING ERRCODE = '22023';
    END IF;
END $$;

-- Raises 22023 unless the text is a step kind.
CREATE OR REPLACE FUNCTION queue.check_step_kind(p_kind text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF NOT queue.is_step_kind(p_kind) THEN
        RAISE EXCEPTION 'step kind must be run, sleep, wait or child' USING ERRCODE = '22023';
    END IF;
END $$;

-- A queue's settings; raises P0002 when the queue does not exist.
CREATE OR REPLACE FUNCTION queue.meta(p_name text)
 RETURNS queue.queue_meta
 LANGUAGE plpgsql
 STABLE
AS $$
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

-- Serialises sends and head promotion within one message group (transaction-scoped advisory lock).
CREATE OR REPLACE FUNCTION queue.lock_group(p_name text, p_group text)
 RETURNS void
 LANGUAGE sql
AS $$
    SELECT pg_advisory_xact_lock(hashtextextended(p_name || chr(1) || p_group, 7));
$$;

-- Wakes listeners after commit: at most one NOTIFY per queue per transaction, carrying the queue
-- name only.
CREATE OR REPLACE FUNCTION queue.notify_once(p_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $$
DECLARE
    v_seen text := coalesce(current_setting('queue.notified', true), '');
BEGIN
    IF position('/' || p_name || '/' IN v_seen) > 0 THEN
        RETURN;
    END IF;
    PERFORM set_config('queue.notified', v_seen || '/' || p_name || '/', true);
    PERFORM pg_notify('queue_wakeup', p_name);
END $$;

-- Prepares a per-queue statement once per session (re-prepared when its text changes) and returns
-- the EXECUTE that runs it.
CREATE OR REPLACE FUNCTION queue.prepared_sql(p_stmt text, p_tbl text, p_sql text, p_types text, p_args text)
 RETURNS text
 LANGUAGE plpgsql
AS $$
DECLARE
    v_seen text := coalesce(current_setting('queue.prepared', true), '');
    v_key  text := '/' || p_stmt || ':' || hashtext(p_types || ')' || p_sql) || '/';
    v_text text;
    v_had  text;
BEGIN
    IF position(v_key IN v_seen) = 0 THEN
        v_text := format('PREPARE %I (%s) AS ', p_stmt, p_types) || format(p_sql, p_tbl);
        SELECT statement INTO v_had FROM pg_prepared_statements WHERE name = p_stmt;
        IF v_had IS DISTINCT FROM v_text THEN
            IF v_had IS NOT NULL THEN
                EXECUTE format('DEALLOCATE %I', p_stmt);
            END IF;
            EXECUTE v_text;
        END IF;
        -- The key of an earlier text of this name goes: its statement is gone.
        PERFORM set_config('queue.prepared',
            regexp_replace(v_seen, '/' || p_stmt || ':-?[0-9]+/', '', 'g') || v_key, false);
    END IF;
    RETURN format('EXECUTE %I (%s)', p_stmt, p_args);
END $$;

-- A lease's receipt: its visibility time in microseconds since the epoch (inlinable, so a stale
-- receipt never matches).
CREATE OR REPLACE FUNCTION queue.receipt_of(p_vt timestamp with time zone)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT (extract(epoch FROM p_vt - timestamptz 'epoch') * 1000000)::bigint;
$$;

-- Whether a JSON value is a whole number from p_lo to p_hi.
CREATE OR REPLACE FUNCTION queue.whole_number_between(p_value jsonb, p_lo bigint, p_hi bigint)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT jsonb_typeof(p_value) = 'number'
           AND p_value::text::numeric BETWEEN p_lo AND p_hi
           AND p_value::text::numeric = trunc(p_value::text::numeric);
$$;

-- Raises 22023 naming p_field unless p_values is a JSON object of at most p_most values, each a
-- whole number from 1 to p_max (a limit by value, a weight by key).
CREATE OR REPLACE FUNCTION queue.check_whole_numbers(p_field text, p_values jsonb, p_most integer, p_max integer)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
DECLARE
    e record;
BEGIN
    IF jsonb_typeof(p_values) <> 'object' OR (SELECT count(*) FROM jsonb_object_keys(p_values)) > p_most THEN
        RAISE EXCEPTION '% must be an object of at most % values, each a whole number', p_field, p_most
            USING ERRCODE = '22023';
    END IF;
    FOR e IN SELECT * FROM jsonb_each(p_values) LOOP
        IF NOT queue.whole_number_between(e.value, 1, p_max) THEN
            RAISE EXCEPTION '%.% must be a whole number from 1 to %, got %', p_field, e.key, p_max, e.value
                USING ERRCODE = '22023';
        END IF;
    END LOOP;
END $$;

-- Raises 22023 naming p_field unless p_path (null passes) is a JSON path (PostgreSQL's jsonpath)
-- of 1 to 255 characters; p_example is shown as one that is.
CREATE OR REPLACE FUNCTION queue.check_json_path(p_field text, p_path text, p_example text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF p_path IS NULL THEN
        RETURN;
    END IF;
    IF p_path = '' OR length(p_path) > 255 THEN
        RAISE EXCEPTION '% must be a JSON path of 1 to 255 characters', p_field USING ERRCODE = '22023';
    END IF;
    BEGIN
        PERFORM p_path::jsonpath;
    EXCEPTION WHEN syntax_error OR invalid_text_representation THEN
        RAISE EXCEPTION '% is not a JSON path (such as %): %', p_field, p_example, SQLERRM USING ERRCODE = '22023';
    END;
END $$;

