-- The request functions run their statements on generic plans.
--
-- PostgreSQL plans a prepared statement (and a PL/pgSQL statement with
-- parameters) for its parameter values on the first five executions and then
-- keeps a generic plan only if that costs no more than the custom ones did.
-- The queue's receive fails that comparison (its custom plan drops the
-- "matcher IS NULL OR body @> matcher" test that the generic plan keeps), so
-- it was planned anew on every call: about 0.13 ms of planning for 0.05 ms of
-- execution, the largest single cost of a receive. The completion batch's ack
-- switched between the two. These statements look rows up by key or walk the
-- ready index in order, and enable_seqscan = off (V010) already holds their
-- plans to the indexes, so the generic plan is the plan: forcing it removes
-- the replanning and changes no plan's shape.
--
-- Like enable_seqscan, the setting holds for each call and everything it
-- calls, and a CREATE OR REPLACE of one of these functions drops it.

-- The functions are those V010 (and later migrations, for the functions they
-- added) gave enable_seqscan = off.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure
          FROM pg_proc p
         WHERE p.pronamespace = 'queue'::regnamespace
           AND 'enable_seqscan=off' = ANY (p.proconfig)
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET plan_cache_mode = force_generic_plan', f);
    END LOOP;
END $$;
