-- Row rules of the workflow tables. Each table has one CHECK constraint calling its function: one
-- call per written row is cheaper to plan than many CHECK expressions. The schema baseline
-- declares them so the constraints can name them; the bodies are here.

-- The workflow_run table's row rules, checked by its one CHECK constraint; raises 23514 naming the
-- broken rule.
CREATE OR REPLACE FUNCTION queue.workflow_run_valid(p_name text, p_version integer, p_status queue.workflow_status, p_key text, p_keep integer, p_trace text, p_msg_id bigint, p_wait_step text, p_wait_event text, p_error jsonb, p_completed timestamp with time zone)
 RETURNS boolean
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
DECLARE
    v_broken text;
BEGIN
    IF p_name !~ '^[a-z0-9_][a-z0-9_-]{0,42}$' THEN
        v_broken := 'workflow_name must be 1 to 43 characters of a-z, 0-9, "_" and "-"';
    ELSIF p_version < 1 THEN
        v_broken := 'workflow_version must be at least 1';
    ELSIF length(p_key) NOT BETWEEN 1 AND 255 THEN
        v_broken := 'idempotency_key must be 1 to 255 characters';
    ELSIF p_keep NOT BETWEEN 1 AND 36500 THEN
        v_broken := 'retention_days must be between 1 and 36500';
    ELSIF length(p_trace) > 128 THEN
        v_broken := 'trace_context must be at most 128 characters';
    ELSIF (p_status = 'running') <> (p_completed IS NULL) THEN
        v_broken := 'a run has completed_at exactly when it is not running';
    ELSIF p_status <> 'running' AND (p_msg_id IS NOT NULL OR p_wait_step IS NOT NULL) THEN
        v_broken := 'a run that is not running has no current message and no wait';
    ELSIF p_status = 'failed' AND p_error IS NULL THEN
        v_broken := 'a failed run has an error';
    ELSIF p_status = 'completed' AND p_error IS NOT NULL THEN
        v_broken := 'a completed run has no error';
    ELSIF (p_wait_step IS NULL) <> (p_wait_event IS NULL) THEN
        v_broken := 'a run waits on a step and an event together or not at all';
    END IF;
    IF v_broken IS NOT NULL THEN
        RAISE EXCEPTION 'workflow_run row breaks a rule: %', v_broken USING ERRCODE = '23514';
    END IF;
    RETURN true;
END $$;

-- The workflow_step table's row rules, checked by its one CHECK constraint; raises 23514 naming the
-- broken rule.
CREATE OR REPLACE FUNCTION queue.workflow_step_valid(p_step_name text, p_kind text)
 RETURNS boolean
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF octet_length(p_step_name) NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'workflow_step row breaks a rule: step_name must be 1 to 256 bytes'
            USING ERRCODE = '23514';
    END IF;
    IF NOT queue.is_step_kind(p_kind) THEN
        RAISE EXCEPTION 'workflow_step row breaks a rule: kind must be run, sleep, wait or child'
            USING ERRCODE = '23514';
    END IF;
    RETURN true;
END $$;
