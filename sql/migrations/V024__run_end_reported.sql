-- A completion that ends its run took the server two calls: the completion,
-- then a read of the run for what the run's span and metrics report (its
-- version, start and end, trace). workflow_complete_ended makes the
-- completion and answers with those in one call. It changes nothing of the
-- completion: it calls workflow_complete_step, then reads the run it ended,
-- in the same transaction.
CREATE FUNCTION queue.workflow_complete_ended(
    p_run_id bigint,
    p_msg_id bigint,
    p_receipt bigint,
    p_step_name text,
    p_step_kind text,
    p_output jsonb,
    p_error jsonb,
    p_started_at timestamptz,
    p_result jsonb,
    p_lease int DEFAULT 60
) RETURNS TABLE (
    outcome       text,
    version       int,
    started_at    timestamptz,
    completed_at  timestamptz,
    trace_context text
)
LANGUAGE plpgsql AS $$
BEGIN
    IF p_result IS NULL THEN
        RAISE EXCEPTION 'a completion that ends a run needs a result' USING ERRCODE = '22023';
    END IF;
    SELECT c.outcome INTO outcome
      FROM queue.workflow_complete_step(p_run_id, p_msg_id, p_receipt, p_step_name, p_step_kind,
                                        p_output, p_error, p_started_at, NULL, p_result, p_lease) c;
    IF outcome = 'ok' THEN
        SELECT r.workflow_version, r.started_at, r.completed_at, r.trace_context
          INTO version, started_at, completed_at, trace_context
          FROM queue.workflow_run r WHERE r.run_id = p_run_id;
    END IF;
    RETURN NEXT;
END $$;

ALTER FUNCTION queue.workflow_complete_ended(bigint, bigint, bigint, text, text, jsonb, jsonb, timestamptz, jsonb, int)
    SET enable_seqscan = off;
ALTER FUNCTION queue.workflow_complete_ended(bigint, bigint, bigint, text, text, jsonb, jsonb, timestamptz, jsonb, int)
    SET plan_cache_mode = force_generic_plan;
