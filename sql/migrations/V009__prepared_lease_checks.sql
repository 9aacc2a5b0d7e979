-- The two look-ups every single-run completion, retry and lease extension
-- makes on the held message (its lease, its receive count) run statements
-- prepared once per session, as send, receive and delete do since V007.
-- read_ct is no longer STABLE: EXECUTE of a prepared statement is not
-- allowed in a function that is.

CREATE OR REPLACE FUNCTION queue.workflow_holds_lease(p_queue text, p_msg_id bigint, p_receipt bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_vt timestamptz;
BEGIN
    EXECUTE queue.prepared_sql('q_hold_' || p_queue, 'q_' || p_queue,
        'SELECT vt FROM queue.%I WHERE msg_id = $1 FOR UPDATE',
        'bigint', format('%L', p_msg_id))
        INTO v_vt;
    RETURN v_vt IS NOT NULL AND queue.receipt_of(v_vt) = p_receipt;
END $$;

CREATE OR REPLACE FUNCTION queue.read_ct(p_name text, p_msg_id bigint) RETURNS int
LANGUAGE plpgsql AS $$
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
