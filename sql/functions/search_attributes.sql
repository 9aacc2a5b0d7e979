-- Search attributes: typed values per run (queue.run_attribute), the attributes defined
-- (queue.search_attribute), and queries over runs by them and by a run's own fields. A query comes
-- as a tree (what the server's parser makes of the text a user writes); run_query_where turns it
-- into a condition whose values are all bound parameters.

-- The type of a run's own field that a query may name, null for any other name.
CREATE OR REPLACE FUNCTION queue.search_field_type(p_name text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT CASE p_name
        WHEN 'status' THEN 'status'
        WHEN 'workflow' THEN 'text'
        WHEN 'runId' THEN 'number'
        WHEN 'version' THEN 'number'
        WHEN 'startedAt' THEN 'time'
        WHEN 'completedAt' THEN 'time'
    END
$$;

-- Defines a search attribute; defining it again with its type changes nothing (created false).
-- Raises 22023 naming the field for a bad name or type, 23505 for a name defined with another type.
CREATE OR REPLACE FUNCTION queue.search_attribute_define(p_name text, p_type text)
 RETURNS TABLE(name text, type text, created boolean)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_type text;
BEGIN
    IF p_name IS NULL OR p_name !~ '^[a-zA-Z][a-zA-Z0-9_]{0,63}$' THEN
        RAISE EXCEPTION 'name "%" must be a letter then up to 63 letters, digits and "_"',
            left(coalesce(p_name, ''), 80) USING ERRCODE = '22023';
    END IF;
    IF queue.search_field_type(p_name) IS NOT NULL THEN
        RAISE EXCEPTION 'name "%" is a field every run has', p_name USING ERRCODE = '22023';
    END IF;
    IF p_type IS NULL OR p_type NOT IN ('text', 'keyword_list', 'number', 'boolean', 'time') THEN
        RAISE EXCEPTION 'type must be text, keyword_list, number, boolean or time, not "%"',
            left(coalesce(p_type, ''), 40) USING ERRCODE = '22023';
    END IF;
    INSERT INTO queue.search_attribute AS a (name, type) VALUES (p_name, p_type)
    ON CONFLICT ON CONSTRAINT search_attribute_pkey DO NOTHING;
    IF FOUND THEN
        RETURN QUERY SELECT p_name, p_type, true;
        RETURN;
    END IF;
    SELECT a.type INTO v_type FROM queue.search_attribute a WHERE a.name = p_name;
    IF v_type <> p_type THEN
        RAISE EXCEPTION 'search attribute % is already a % attribute', p_name, v_type USING ERRCODE = '23505';
    END IF;
    RETURN QUERY SELECT p_name, p_type, false;
END $$;

-- The search attributes defined, by name.
CREATE OR REPLACE FUNCTION queue.search_attributes()
 RETURNS TABLE(name text, type text, created_at timestamp with time zone)
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT a.name, a.type, a.created_at FROM queue.search_attribute a ORDER BY a.name;
$$;

-- Raises 22023 naming the field (p_field.<name>) unless p_attributes is an object of at most 50
-- defined attributes, each a value of its type or null (which removes it): text a string of at
-- most 1024 characters, keyword_list an array of at most 100 strings of at most 256, number a JSON
-- number, boolean true or false, time an ISO 8601 date or timestamp.
CREATE OR REPLACE FUNCTION queue.check_run_attributes(p_field text, p_attributes jsonb)
 RETURNS void
 LANGUAGE plpgsql
 STABLE
AS $$
DECLARE
    e      record;
    v_type text;
    v_kind text;
BEGIN
    IF p_attributes IS NULL OR jsonb_typeof(p_attributes) <> 'object' THEN
        RAISE EXCEPTION '% must be an object of search attribute names to values', p_field USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range(p_field || ' (its count)', (SELECT count(*) FROM jsonb_object_keys(p_attributes)), 0, 50);
    FOR e IN SELECT j.key, j.value FROM jsonb_each(p_attributes) j LOOP
        SELECT a.type INTO v_type FROM queue.search_attribute a WHERE a.name = e.key;
        IF v_type IS NULL THEN
            RAISE EXCEPTION '%.% is not a search attribute; define it first', p_field, left(e.key, 80)
                USING ERRCODE = '22023';
        END IF;
        v_kind := jsonb_typeof(e.value);
        CONTINUE WHEN v_kind = 'null';
        IF (v_type = 'text' AND (v_kind <> 'string' OR length(e.value ->> 0) > 1024))
           OR (v_type = 'number' AND v_kind <> 'number')
           OR (v_type = 'boolean' AND v_kind <> 'boolean')
           OR (v_type = 'time' AND (v_kind <> 'string' OR NOT queue.is_search_time(e.value #>> '{}')))
           OR (v_type = 'keyword_list'
               AND (v_kind <> 'array' OR jsonb_array_length(e.value) > 100
                    OR EXISTS (SELECT 1 FROM jsonb_array_elements(e.value) x
                                WHERE jsonb_typeof(x) <> 'string' OR length(x #>> '{}') > 256))) THEN
            RAISE EXCEPTION '%.% is a % attribute: %', p_field, e.key, v_type,
                CASE v_type WHEN 'text' THEN 'a string of at most 1024 characters'
                            WHEN 'number' THEN 'a number'
                            WHEN 'boolean' THEN 'true or false'
                            WHEN 'time' THEN 'an ISO 8601 date or timestamp such as "2026-12-01T09:30:00Z"'
                            ELSE 'an array of at most 100 strings of at most 256 characters' END
                USING ERRCODE = '22023';
        END IF;
    END LOOP;
END $$;

-- Whether the text is an ISO 8601 date or timestamp (a date alone is midnight UTC).
CREATE OR REPLACE FUNCTION queue.is_search_time(p_text text)
 RETURNS boolean
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF p_text !~ '^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$' THEN
        RETURN false;
    END IF;
    PERFORM queue.search_time(p_text);
    RETURN true;
EXCEPTION WHEN OTHERS THEN
    RETURN false;
END $$;

-- The instant an ISO 8601 date or timestamp names, UTC when it names no offset.
CREATE OR REPLACE FUNCTION queue.search_time(p_text text)
 RETURNS timestamp with time zone
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT CASE WHEN p_text ~ '(Z|[+-]\d{2}(:?\d{2})?)$' AND length(p_text) > 10
                THEN p_text::timestamptz
                ELSE (p_text::timestamp) AT TIME ZONE 'UTC' END
$$;

-- Sets run p_run_id's attributes named in p_attributes (checked as check_run_attributes does,
-- naming p_field), a null value removing one; the others stay.
CREATE OR REPLACE FUNCTION queue.run_attributes_set(p_run_id bigint, p_attributes jsonb, p_field text DEFAULT 'attributes')
 RETURNS void
 LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM queue.check_run_attributes(p_field, p_attributes);
    DELETE FROM queue.run_attribute a
     WHERE a.run_id = p_run_id AND a.name IN (SELECT jsonb_object_keys(p_attributes));
    INSERT INTO queue.run_attribute (run_id, name, ord, v_text, v_num, v_bool, v_time)
    SELECT p_run_id, e.key, x.ord - 1,
           CASE WHEN d.type IN ('text', 'keyword_list') THEN x.value #>> '{}' END,
           CASE WHEN d.type = 'number' THEN (x.value #>> '{}')::numeric END,
           CASE WHEN d.type = 'boolean' THEN (x.value #>> '{}')::boolean END,
           CASE WHEN d.type = 'time' THEN queue.search_time(x.value #>> '{}') END
      FROM jsonb_each(p_attributes) e
      JOIN queue.search_attribute d ON d.name = e.key
     CROSS JOIN LATERAL (SELECT v.value, v.ord FROM jsonb_array_elements(e.value) WITH ORDINALITY v(value, ord)
                          WHERE d.type = 'keyword_list'
                         UNION ALL
                         SELECT e.value, 1 WHERE d.type <> 'keyword_list') x
     WHERE jsonb_typeof(e.value) <> 'null'
     ON CONFLICT DO NOTHING;
END $$;

-- Run p_run_id's attributes as an object of names to values (keyword lists in their order).
CREATE OR REPLACE FUNCTION queue.run_attributes(p_run_id bigint)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT coalesce(jsonb_object_agg(v.name, v.value), '{}'::jsonb)
      FROM (SELECT a.name,
                   CASE WHEN d.type = 'keyword_list' THEN jsonb_agg(to_jsonb(a.v_text) ORDER BY a.ord)
                        ELSE (array_agg(coalesce(to_jsonb(a.v_text), to_jsonb(a.v_num), to_jsonb(a.v_bool),
                                                 to_jsonb(to_char(a.v_time AT TIME ZONE 'UTC',
                                                                  'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')))))[1] END AS value
              FROM queue.run_attribute a
              JOIN queue.search_attribute d ON d.name = a.name
             WHERE a.run_id = p_run_id
             GROUP BY a.name, d.type) v;
$$;

-- Sets attributes of run p_run_id of workflow p_name (see run_attributes_set) and answers all its
-- attributes; raises P0002 when there is no such run.
CREATE OR REPLACE FUNCTION queue.workflow_set_attributes(p_name text, p_run_id bigint, p_attributes jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    PERFORM 1 FROM queue.workflow_run r WHERE r.run_id = p_run_id AND r.workflow_name = p_name FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'run % of workflow % not found', p_run_id, p_name USING ERRCODE = 'P0002';
    END IF;
    PERFORM queue.run_attributes_set(p_run_id, p_attributes);
    RETURN queue.run_attributes(p_run_id);
END $$;

-- Raises 22023 for a query that names what it cannot: "query at <position>: <what>".
CREATE OR REPLACE FUNCTION queue.search_refuse(p_node jsonb, p_what text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    RAISE EXCEPTION 'query at %: %', coalesce(p_node ->> 'pos', '?'), p_what USING ERRCODE = '22023';
END $$;

-- A query tree's condition on queue.workflow_run r, its values appended to p_vals and referred to
-- as $1->>i (bound, never spliced). Nodes: {"and": [...]}, {"or": [...]}, {"not": node},
-- {"field", "op", "value", "pos"} with op one of = != < <= > >=, {"field", "op": "in", "values"},
-- {"field", "op": "starts_with", "value"}. A field is a run's own (search_field_type) or a defined
-- attribute; a value must suit its type. A comparison with an attribute holds only for runs that
-- have it; a keyword list is equal to each of its elements.
CREATE OR REPLACE FUNCTION queue.run_query_where(p_node jsonb, p_vals jsonb, OUT o_sql text, OUT o_vals jsonb)
 LANGUAGE plpgsql
 STABLE
AS $$
DECLARE
    v_parts  text[] := '{}';
    v_child  record;
    v_field  text := p_node ->> 'field';
    v_op     text := p_node ->> 'op';
    v_own    text;
    v_type   text;
    v_values jsonb;
    v_value  jsonb;
    v_col    text;
    v_cast   text;
    v_sql    text;
    v_at     int;
BEGIN
    o_vals := p_vals;
    IF jsonb_typeof(p_node) <> 'object' THEN
        RAISE EXCEPTION 'query must be a tree of conditions' USING ERRCODE = '22023';
    END IF;
    IF p_node ? 'and' OR p_node ? 'or' THEN
        IF jsonb_typeof(p_node -> coalesce(CASE WHEN p_node ? 'and' THEN 'and' END, 'or')) <> 'array' THEN
            RAISE EXCEPTION 'query must be a tree of conditions' USING ERRCODE = '22023';
        END IF;
        FOR v_child IN SELECT c.value FROM jsonb_array_elements(p_node -> coalesce(CASE WHEN p_node ? 'and' THEN 'and' END, 'or')) c LOOP
            SELECT w.o_sql, w.o_vals INTO v_sql, o_vals FROM queue.run_query_where(v_child.value, o_vals) w;
            v_parts := v_parts || v_sql;
        END LOOP;
        o_sql := '(' || array_to_string(v_parts, CASE WHEN p_node ? 'and' THEN ' AND ' ELSE ' OR ' END) || ')';
        RETURN;
    END IF;
    IF p_node ? 'not' THEN
        SELECT w.o_sql, w.o_vals INTO v_sql, o_vals FROM queue.run_query_where(p_node -> 'not', o_vals) w;
        o_sql := '(NOT ' || v_sql || ')';
        RETURN;
    END IF;

    v_own := queue.search_field_type(v_field);
    v_type := coalesce(v_own, (SELECT a.type FROM queue.search_attribute a WHERE a.name = v_field));
    IF v_type IS NULL THEN
        PERFORM queue.search_refuse(p_node, format('%s is neither a field of runs (status, workflow, runId, version, startedAt, completedAt) nor a search attribute', v_field));
    END IF;
    IF v_op NOT IN ('=', '!=', '<', '<=', '>', '>=', 'in', 'starts_with') OR v_op IS NULL THEN
        PERFORM queue.search_refuse(p_node, format('%s is not an operator', coalesce(v_op, 'null')));
    END IF;
    IF (v_op IN ('<', '<=', '>', '>=') AND v_type NOT IN ('number', 'time'))
       OR (v_op = 'starts_with' AND v_type NOT IN ('text', 'keyword_list'))
       OR (v_op = '!=' AND v_type = 'keyword_list') THEN
        PERFORM queue.search_refuse(p_node, format('%s is a %s; %s does not apply to it', v_field,
                                                   replace(v_type, '_', ' '), upper(v_op)));
    END IF;
    v_values := CASE WHEN v_op = 'in' THEN p_node -> 'values' ELSE jsonb_build_array(p_node -> 'value') END;
    IF jsonb_typeof(v_values) IS DISTINCT FROM 'array' OR jsonb_array_length(v_values) NOT BETWEEN 1 AND 100 THEN
        PERFORM queue.search_refuse(p_node, 'IN takes 1 to 100 values');
    END IF;
    FOR v_value IN SELECT x.value FROM jsonb_array_elements(v_values) x LOOP
        IF NOT (CASE v_type
                    WHEN 'number' THEN jsonb_typeof(v_value) = 'number'
                    WHEN 'boolean' THEN jsonb_typeof(v_value) = 'boolean'
                    WHEN 'time' THEN jsonb_typeof(v_value) = 'string' AND queue.is_search_time(v_value #>> '{}')
                    WHEN 'status' THEN jsonb_typeof(v_value) = 'string'
                                       AND (v_value #>> '{}') IN ('running', 'completed', 'failed', 'cancelled', 'timed_out')
                    ELSE jsonb_typeof(v_value) = 'string' END) THEN
            PERFORM queue.search_refuse(p_node, format('%s is %s; %s is not', v_field,
                CASE v_type WHEN 'number' THEN 'a number'
                            WHEN 'boolean' THEN 'true or false'
                            WHEN 'time' THEN 'a time (an ISO 8601 date or timestamp)'
                            WHEN 'status' THEN 'one of running, completed, failed, cancelled, timed_out'
                            ELSE 'text' END,
                v_value::text));
        END IF;
    END LOOP;

    -- Times are bound as instants, so a date means its midnight UTC.
    IF v_type = 'time' THEN
        SELECT jsonb_agg(to_jsonb(queue.search_time(x.value #>> '{}'))) INTO v_values FROM jsonb_array_elements(v_values) x;
    END IF;
    v_at := jsonb_array_length(o_vals);
    o_vals := o_vals || jsonb_build_array(v_values);
    v_cast := CASE v_type WHEN 'number' THEN 'numeric' WHEN 'boolean' THEN 'boolean' WHEN 'time' THEN 'timestamptz'
                          WHEN 'status' THEN 'queue.workflow_status' ELSE 'text' END;
    IF v_own IS NOT NULL THEN
        v_col := CASE v_field WHEN 'status' THEN 'r.status' WHEN 'workflow' THEN 'r.workflow_name'
                              WHEN 'runId' THEN 'r.run_id' WHEN 'version' THEN 'r.workflow_version'
                              WHEN 'startedAt' THEN 'r.started_at' ELSE 'r.completed_at' END;
    ELSE
        v_col := CASE v_type WHEN 'number' THEN 'a.v_num' WHEN 'boolean' THEN 'a.v_bool' WHEN 'time' THEN 'a.v_time'
                             ELSE 'a.v_text' END;
    END IF;
    v_sql := CASE v_op
        WHEN 'in' THEN format('%s = ANY (ARRAY(SELECT jsonb_array_elements_text($1->%s))::%s[])', v_col, v_at, v_cast)
        -- An attribute's text is compared bytewise (COLLATE "C"), so its prefix is a range of the index.
        WHEN 'starts_with' THEN CASE WHEN v_own IS NOT NULL THEN format('starts_with(%s, $1->%s->>0)', v_col, v_at)
                                     ELSE format('(%1$s >= ($1->%2$s->>0) AND %1$s < ($1->%2$s->>0) || chr(1114111))', v_col, v_at) END
        WHEN '!=' THEN format('%s <> ($1->%s->>0)::%s', v_col, v_at, v_cast)
        ELSE format('%s %s ($1->%s->>0)::%s', v_col, v_op, v_at, v_cast) END;
    IF v_own IS NOT NULL THEN
        o_sql := v_sql;
    ELSE
        v_at := jsonb_array_length(o_vals);
        o_vals := o_vals || jsonb_build_array(v_field);
        o_sql := format('EXISTS (SELECT 1 FROM queue.run_attribute a WHERE a.run_id = r.run_id AND a.name = ($1->>%s) AND %s)',
                        v_at, v_sql);
    END IF;
END $$;

-- The statement run_search (p_count false) or run_count (true) runs for a query (null: all runs),
-- and its first parameter's value; run_search binds p_before as $2 and p_limit as $3.
CREATE OR REPLACE FUNCTION queue.run_query_statement(p_query jsonb, p_count boolean, OUT o_sql text, OUT o_vals jsonb)
 LANGUAGE plpgsql
 STABLE
AS $$
DECLARE
    v_where text := 'true';
BEGIN
    o_vals := '[]';
    IF p_query IS NOT NULL THEN
        SELECT w.o_sql, w.o_vals INTO v_where, o_vals FROM queue.run_query_where(p_query, '[]') w;
    END IF;
    o_sql := CASE WHEN p_count THEN format('SELECT count(*) FROM queue.workflow_run r WHERE %s', v_where)
                  ELSE format('SELECT r.* FROM queue.workflow_run r WHERE %s AND ($2::bigint IS NULL OR r.run_id < $2)'
                              ' ORDER BY r.run_id DESC LIMIT $3', v_where) END;
END $$;

-- Runs a query selects (null: all runs), newest first, before run p_before when given.
CREATE OR REPLACE FUNCTION queue.run_search(p_query jsonb, p_before bigint DEFAULT NULL::bigint, p_limit integer DEFAULT 50)
 RETURNS SETOF queue.workflow_run
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    q record;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    SELECT * INTO q FROM queue.run_query_statement(p_query, false);
    RETURN QUERY EXECUTE q.o_sql USING q.o_vals, p_before, p_limit;
END $$;

-- How many runs a query selects (null: all runs). As run_search, it reads indexes only: a query that
-- selects a large share of the runs would otherwise be planned as a scan of the whole table.
CREATE OR REPLACE FUNCTION queue.run_count(p_query jsonb)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    q       record;
    v_count bigint;
BEGIN
    SELECT * INTO q FROM queue.run_query_statement(p_query, true);
    EXECUTE q.o_sql INTO v_count USING q.o_vals;
    RETURN v_count;
END $$;
