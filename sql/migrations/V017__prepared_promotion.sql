-- The completion batch's last dynamic statement, the promotion of the next
-- message in the groups whose head it acked, was parsed and planned on every
-- batch that ended a run (almost every batch under load); it is prepared once
-- per session now, as the batch's other statements on the queue table are.
-- workflow_complete_batch (V011) is patched in place rather than restated,
-- which keeps its settings (enable_seqscan).
DO $$
DECLARE
    v_old text := pg_get_functiondef('queue.workflow_complete_batch(text, jsonb)'::regprocedure);
    v_new text;
BEGIN
    v_new := replace(replace(v_old,
        $old$EXECUTE format($q$
            WITH p AS ($old$,
        $new$EXECUTE queue.prepared_sql('wf_promote_' || p_name, v_tbl, $q$
            WITH p AS ($new$),
        $old$SELECT coalesce(array_agg(p.vt), '{}') FROM p$q$, v_tbl)
            INTO v_vts USING v_groups;$old$,
        $new$SELECT coalesce(array_agg(p.vt), '{}') FROM p$q$,
            'text[]', format('%L', v_groups))
            INTO v_vts;$new$);
    IF v_new = v_old OR position('EXECUTE format($q$' IN v_new) > 0 THEN
        RAISE EXCEPTION 'workflow_complete_batch has no promotion statement to patch';
    END IF;
    EXECUTE v_new;
END $$;
