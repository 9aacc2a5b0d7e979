-- Child runs: started once per parent step, linked to their parent, and reporting their end to it
-- through its inbox in the transaction that ends them.

-- Starts the child run of a parent's step, exactly once: the child's idempotency key is derived
-- from the parent run and the step, so a replay of the step gets the same child. The child may be
-- of any workflow and version; its retention is at least its parent's. P0002 when the parent does
-- not exist, WF002 when it is not running. p_timing carries the child's concurrencyKey, priority and
-- deadline (deadlineMs or deadlineAt), as a start's fields (see workflow_start). A repeated start
-- of a child that continued as new answers the chain's first run (the id its end is reported
-- under) with the status of the chain's last run.
DROP FUNCTION IF EXISTS queue.workflow_start_child(bigint, text, text, jsonb, integer, text, integer, integer, text);
CREATE OR REPLACE FUNCTION queue.workflow_start_child(p_parent_run_id bigint, p_parent_step text, p_name text, p_input jsonb, p_version integer DEFAULT NULL::integer, p_on_parent_cancel text DEFAULT 'cancel'::text, p_retention_days integer DEFAULT NULL::integer, p_max_retention_days integer DEFAULT 365, p_trace_context text DEFAULT NULL::text, p_timing jsonb DEFAULT NULL::jsonb)
 RETURNS TABLE(run_id bigint, status queue.workflow_status, created boolean)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    p       queue.workflow_run;
    c       record;
    v_first bigint;
BEGIN
    PERFORM queue.check_step_name(p_parent_step);
    IF p_on_parent_cancel IS NULL OR p_on_parent_cancel NOT IN ('cancel', 'abandon') THEN
        RAISE EXCEPTION 'onParentCancel must be cancel or abandon' USING ERRCODE = '22023';
    END IF;
    IF p_timing IS NOT NULL AND (jsonb_typeof(p_timing) <> 'object'
       OR p_timing ?| ARRAY['startAt', 'delayMs', 'debounceKey', 'debounceMs']) THEN
        RAISE EXCEPTION 'a child run takes concurrencyKey, priority and a deadline, not startAt, delayMs or a debounce'
            USING ERRCODE = '22023';
    END IF;
    -- Shared: a cancel of the parent waits for this child, and then finds it.
    SELECT * INTO p FROM queue.workflow_run wr WHERE wr.run_id = p_parent_run_id FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'parent run % does not exist', p_parent_run_id USING ERRCODE = 'P0002';
    END IF;
    SELECT * INTO c
      FROM queue.workflow_start(p_name, p_input, p_version,
                                '__child/' || p_parent_run_id || '/' || p_parent_step,
                                greatest(coalesce(p_retention_days, p.retention_days), p.retention_days),
                                greatest(p_max_retention_days, p.retention_days), p_trace_context,
                                p_timing) s;
    IF c.created THEN
        IF p.status <> 'running' THEN
            RAISE EXCEPTION 'parent run % is %, so it starts no children', p_parent_run_id, p.status
                USING ERRCODE = 'WF002';
        END IF;
        UPDATE queue.workflow_run wr
           SET parent_run_id = p_parent_run_id, parent_step = p_parent_step,
               on_parent_cancel = p_on_parent_cancel
         WHERE wr.run_id = c.run_id;
    END IF;
    IF NOT c.created THEN
        -- The key may have moved along the child's chain (continue-as-new): the parent knows the
        -- chain by its first run, whose id its end is reported under, and its state is the last's.
        SELECT coalesce(wr.chain_first, wr.run_id) INTO v_first
          FROM queue.workflow_run wr WHERE wr.run_id = c.run_id;
        IF v_first IS DISTINCT FROM c.run_id THEN
            SELECT wr.status INTO c.status FROM queue.workflow_run wr
             WHERE wr.chain_first = v_first ORDER BY wr.run_id DESC LIMIT 1;
            c.run_id := v_first;
        END IF;
    END IF;
    RETURN QUERY SELECT c.run_id, c.status, c.created;
END $$;

-- A parent's children in start order.
CREATE OR REPLACE FUNCTION queue.workflow_children(p_run_id bigint)
 RETURNS TABLE(run_id bigint, workflow_name text, status queue.workflow_status, parent_step text)
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT r.run_id, r.workflow_name, r.status, r.parent_step
      FROM queue.workflow_run r WHERE r.parent_run_id = p_run_id ORDER BY r.run_id;
$$;

-- Tells a child's parent that the child ended, as the event __child.<runId> with the child's status,
-- output and error; a parent no longer running is not told. A child that continued as new has not
-- ended: the last run of its chain reports the chain's end under the first run's id, the one the
-- parent knows.
CREATE OR REPLACE FUNCTION queue.workflow_child_ended()
 RETURNS trigger
 LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM * FROM queue.workflow_deliver(
        NEW.parent_run_id, '__child.' || coalesce(NEW.chain_first, NEW.run_id),
        jsonb_build_object('runId', coalesce(NEW.chain_first, NEW.run_id), 'workflow', NEW.workflow_name,
                           'status', NEW.status, 'output', NEW.output, 'error', NEW.error));
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER workflow_run_child_ended
    AFTER UPDATE OF status ON queue.workflow_run
    FOR EACH ROW
    WHEN (OLD.status = 'running' AND NEW.status <> 'running' AND NEW.parent_run_id IS NOT NULL
          AND NEW.continued_to IS NULL)
    EXECUTE FUNCTION queue.workflow_child_ended();
