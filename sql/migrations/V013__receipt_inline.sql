-- A receipt is the lease's vt in microseconds since the epoch. queue.receipt_of
-- was declared IMMUTABLE over extract(epoch FROM timestamptz), which PostgreSQL
-- marks STABLE (other fields of a timestamptz depend on the time zone), so the
-- planner would not inline it: every call ran as a function call of its own,
-- three per step (the poll's receipts, the lease kept or renewed, the ack).
-- The same number from the interval since the epoch is immutable throughout,
-- and the body is inlined into the statements that use it.
CREATE OR REPLACE FUNCTION queue.receipt_of(p_vt timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT (extract(epoch FROM p_vt - timestamptz 'epoch') * 1000000)::bigint;
$$;
