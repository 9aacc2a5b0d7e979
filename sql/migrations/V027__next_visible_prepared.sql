-- next_visible_at planned its statement on every call (EXECUTE format), and a
-- long poll asks it each time it goes to wait: about half of the call's cost
-- in the database. It is prepared once per session now, like the queue's
-- other hot statements (V007, V022). It answers as before: the earliest
-- visibility time still ahead, or null. It is no longer STABLE: EXECUTE of a
-- prepared statement is not allowed in a non-volatile function.
--
-- CREATE OR REPLACE drops the function's settings; V010's and V018's are set
-- again.
CREATE OR REPLACE FUNCTION queue.next_visible_at(p_name text) RETURNS timestamptz
LANGUAGE plpgsql AS $$
DECLARE
    v_vt timestamptz;
BEGIN
    PERFORM queue.meta(p_name);
    EXECUTE queue.prepared_sql('q_nextvis_' || p_name, 'q_' || p_name,
        'SELECT vt FROM queue.%I WHERE head AND vt > $1 ORDER BY vt, msg_id LIMIT 1',
        'timestamptz', format('%L', clock_timestamp()))
        INTO v_vt;
    RETURN v_vt;
END $$;

ALTER FUNCTION queue.next_visible_at(text) SET enable_seqscan = off;
ALTER FUNCTION queue.next_visible_at(text) SET plan_cache_mode = force_generic_plan;
