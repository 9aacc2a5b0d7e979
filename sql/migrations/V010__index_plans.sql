-- The functions every request runs plan for index access, whatever the
-- tables looked like when the plan was made.
--
-- A session keeps the plans of its functions' statements (and of the
-- statements prepared by queue.prepared_sql) until something invalidates
-- them, usually an ANALYZE. A server started on fresh tables plans while they
-- are empty, where a sequential scan is cheapest, and kept those plans for as
-- long as autovacuum did not come by: a completion batch then read every run
-- of the workflow to find ten, and a receive every message of the queue.
-- These functions only ever look rows up by key or walk the ready index, so
-- an index is always the right plan; enable_seqscan = off holds for each call
-- and everything it calls, and leaves other sessions' queries alone.
--
-- A CREATE OR REPLACE of one of these functions drops its settings: a later
-- migration that replaces one repeats the ALTER (IndexPlansTest checks
-- that every one of them still has it).

DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure
          FROM pg_proc p
         WHERE p.pronamespace = 'queue'::regnamespace
           AND p.proname IN (
               'send', 'send_batch', 'receive', 'receive_fifo', 'delete', 'change_visibility',
               'next_visible_at', 'publish', 'claim_deliveries', 'finish_delivery',
               'next_delivery_at', 'redrive_dead_letters',
               'workflow_start', 'workflow_start_batch', 'workflow_poll', 'workflow_complete_step',
               'workflow_complete_batch', 'workflow_extend_lease', 'workflow_retry',
               'workflow_signal', 'workflow_cancel', 'workflow_journal')
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET enable_seqscan = off', f);
    END LOOP;
END $$;
