-- promote_next still planned its statement on every call (EXECUTE format):
-- about two thirds of a FIFO delete's cost, paid by every queue delete of a
-- group's head and by every workflow run that ends through
-- workflow_complete_step. It is prepared once per session now, like the
-- queue's other hot statements (V007). Behaviour is unchanged.
CREATE OR REPLACE FUNCTION queue.promote_next(p_name text, p_group text, p_now timestamptz DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
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
