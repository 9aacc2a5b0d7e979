-- workflow_start_leased leases the first messages of the runs it created
-- with two prepared statements that name each message by its key and check
-- that it is its group's head and visible: `msg_id = ... AND head AND
-- vt <= now`. Those last two are also the queue's ready index, (vt, msg_id)
-- WHERE head, and its plans are generic and made again after every ANALYZE.
-- Where the statistics were taken while the queue was (nearly) empty, which
-- a workflow's queue often is between runs, the planner priced the ready
-- index as cheaply as the key and took it: the batch lease read every ready
-- entry up to now, live or dead (a bitmap scan never marks dead ones), and
-- the lease of a keyed start scanned the key index whole and joined. On a
-- scratch database whose queue had been analyzed after emptying, starts
-- handed in batches of two cost 0.77 ms each; after a VACUUM ANALYZE
-- 0.32 ms.
--
-- The checks stay, written so that no index can serve them (a CASE), and
-- the keyed start's lease names its message by a scalar subquery instead of
-- a join: only the queue's key can serve either statement, whatever the
-- statistics. What is leased does not change: the messages were inserted by
-- this transaction as their groups' heads and are visible already.
--
-- Patched in place, as V029 did, so the function keeps its settings.
DO $$
DECLARE
    v_old text := pg_get_functiondef(
        'queue.workflow_start_leased(text, jsonb, int[], int, int, int)'::regprocedure);
    v_new text;
BEGIN
    v_new := replace(replace(v_old,
        $old$                      FROM r
                     WHERE q.msg_id = r.current_msg_id AND q.head AND q.vt <= $3$old$,
        $new$                     WHERE q.msg_id = (SELECT r.current_msg_id FROM r)
                       AND CASE WHEN q.head THEN q.vt <= $3 ELSE false END$new$),
        $old$                 WHERE q.msg_id = ANY ($1) AND q.head AND q.vt <= $2$old$,
        $new$                 WHERE q.msg_id = ANY ($1) AND CASE WHEN q.head THEN q.vt <= $2 ELSE false END$new$);
    IF position('(SELECT r.current_msg_id FROM r)' IN v_new) = 0
       OR position('ANY ($1) AND CASE WHEN q.head' IN v_new) = 0 THEN
        RAISE EXCEPTION 'workflow_start_leased does not have the expected body to patch';
    END IF;
    EXECUTE v_new;
END $$;
