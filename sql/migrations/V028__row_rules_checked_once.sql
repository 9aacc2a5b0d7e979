-- The run and journal tables' CHECK constraints cost every statement that
-- writes them more than the write itself. PostgreSQL reads a table's check
-- expressions back from their stored node text and plans them again for each
-- INSERT or UPDATE it starts (not once per session), so a run row's ten
-- checks and a journal row's two were parsed and planned on every start,
-- every step and every run's end: in a lone run's database time about one
-- part in eight, most of it spent tokenising node text.
--
-- The same rules now sit in one function per table, called by one check
-- each. The stored expression is a single call, and the function's own
-- expressions are compiled once per session. The rules do not change. A row
-- that breaks one is still refused with check_violation (23514), and the
-- message now names the rule it broke.

CREATE FUNCTION queue.workflow_run_valid(
    p_name       text,
    p_version    int,
    p_status     queue.workflow_status,
    p_key        text,
    p_keep       int,
    p_trace      text,
    p_msg_id     bigint,
    p_wait_step  text,
    p_wait_event text,
    p_error      jsonb,
    p_completed  timestamptz)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
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

CREATE FUNCTION queue.workflow_step_valid(p_step_name text, p_kind text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF octet_length(p_step_name) NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'workflow_step row breaks a rule: step_name must be 1 to 256 bytes'
            USING ERRCODE = '23514';
    END IF;
    IF p_kind NOT IN ('run', 'sleep', 'wait') THEN
        RAISE EXCEPTION 'workflow_step row breaks a rule: kind must be run, sleep or wait'
            USING ERRCODE = '23514';
    END IF;
    RETURN true;
END $$;

-- The new checks are added unvalidated and then validated, which reads the
-- tables without rewriting them; the old ones go after, so that no row is
-- ever written unchecked.
ALTER TABLE queue.workflow_run ADD CONSTRAINT workflow_run_valid CHECK (queue.workflow_run_valid(
    workflow_name, workflow_version, status, idempotency_key, retention_days, trace_context,
    current_msg_id, wait_step, wait_event, error, completed_at)) NOT VALID;
ALTER TABLE queue.workflow_run VALIDATE CONSTRAINT workflow_run_valid;
ALTER TABLE queue.workflow_step ADD CONSTRAINT workflow_step_valid
    CHECK (queue.workflow_step_valid(step_name, kind)) NOT VALID;
ALTER TABLE queue.workflow_step VALIDATE CONSTRAINT workflow_step_valid;

DO $$
DECLARE
    v_con record;
BEGIN
    FOR v_con IN
        SELECT c.conrelid::regclass AS tbl, c.conname
          FROM pg_constraint c
         WHERE c.conrelid IN ('queue.workflow_run'::regclass, 'queue.workflow_step'::regclass)
           AND c.contype = 'c'
           AND c.conname NOT IN ('workflow_run_valid', 'workflow_step_valid')
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', v_con.tbl, v_con.conname);
    END LOOP;
END $$;
