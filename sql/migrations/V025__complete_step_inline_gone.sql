-- Since V021 every inline completion of a running run goes through
-- workflow_continue_step, and one that comes back from there (its run is not
-- running) is answered not_running by the general path before anything
-- inline-specific. workflow_complete_step's own inline branch, and the
-- duplicate step's special case for an inline continuation, could no longer
-- be reached. They go, so that the function reads as what it does: the
-- general path for sleeps, waits, delayed continuations and run ends. An
-- inline continuation that does reach that path still has its run's status
-- answered first; nothing else changes. Patched in place, as V021 did, so
-- the function keeps its settings.
DO $$
DECLARE
    v_old text := pg_get_functiondef(
        'queue.workflow_complete_step(bigint, bigint, bigint, text, text, jsonb, jsonb, timestamptz, jsonb, jsonb, int)'::regprocedure);
    v_new text;
    v_from int;
    v_to int;
BEGIN
    v_new := replace(v_old,
        $old$        IF NOT FOUND THEN
            -- An inline continuation's duplicate is most likely the worker's
            -- retry of one that went through: its message stays with the run.
            IF NOT coalesce((p_next ->> 'inline')::boolean, false) THEN
                PERFORM queue.delete(v_queue, p_msg_id);
            END IF;
            RETURN QUERY$old$,
        $new$        IF NOT FOUND THEN
            PERFORM queue.delete(v_queue, p_msg_id);
            RETURN QUERY$new$);
    -- The inline branch: from its test to the end of its block.
    v_from := position($old$    IF coalesce((p_next ->> 'inline')::boolean, false) THEN
        IF v_delay <> 0 OR v_wait IS NOT NULL THEN$old$ IN v_new);
    v_to := position($old$        RETURN QUERY SELECT 'ok'::text, p_msg_id, queue.receipt_of(v_vt);
        RETURN;
    END IF;
$old$ IN v_new);
    IF v_new = v_old OR v_from = 0 OR v_to = 0 OR v_to < v_from THEN
        RAISE EXCEPTION 'workflow_complete_step does not have the expected body to patch';
    END IF;
    v_new := left(v_new, v_from - 1)
          || substr(v_new, v_to + length($old$        RETURN QUERY SELECT 'ok'::text, p_msg_id, queue.receipt_of(v_vt);
        RETURN;
    END IF;
$old$));
    IF position('wf_cont_' IN v_new) > 0 OR position('workflow_continue_step' IN v_new) = 0 THEN
        RAISE EXCEPTION 'workflow_complete_step was not patched as expected';
    END IF;
    EXECUTE v_new;
END $$;
