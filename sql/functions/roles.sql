-- Least privilege: what the roles of sql/roles.sql may call. Each role may EXECUTE only the
-- functions its side needs, each SECURITY DEFINER with a fixed search_path, and may read or write
-- no table.

-- The functions a client calls: start, signal, cancel and read runs.
CREATE OR REPLACE FUNCTION queue.client_functions()
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT ARRAY['schema_version_installed',
                 'workflow_start', 'workflow_start_batch', 'workflow_signal', 'workflow_cancel',
                 'workflow_get', 'workflow_name_of', 'workflow_due_at', 'workflow_list',
                 'workflow_chain', 'workflow_chain_last', 'workflow_children', 'workflow_journal',
                 'workflow_signals', 'workflow_state', 'workflow_states', 'workflow_cancel_on_rules',
                 'workflow_update_send', 'workflow_update_with_start', 'workflow_update_results',
                 'workflow_updates',
                 'run_stream_read', 'run_stream_list',
                 'run_search', 'run_count', 'run_attributes', 'search_attributes', 'workflow_set_attributes'];
$$;

-- The functions a worker process calls: taking and completing tasks, its runs' reads, the
-- registrations its code makes, and the background jobs it runs when it leads.
CREATE OR REPLACE FUNCTION queue.worker_functions()
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT ARRAY['schema_version_installed',
                 'workflow_register_versions', 'workflow_poll', 'workflow_extend_lease',
                 'workflow_retry', 'workflow_continue_step', 'workflow_complete_step',
                 'workflow_complete_ended', 'workflow_complete_batch', 'workflow_journal_steps',
                 'workflow_rate_limited', 'workflow_continue_as_new', 'workflow_start_child',
                 'workflow_start_leased', 'workflow_journal', 'workflow_journal_after', 'workflow_journal_with_aside',
                 'workflow_get', 'workflow_name_of', 'workflow_due_at', 'workflow_state',
                 'workflow_states', 'run_stream_write', 'worker_report', 'workflow_set_attributes', 'schedule_register', 'schedule_set_policy',
                 'workflow_set_cancel_on', 'workflow_cancel_on_rules', 'workflow_callback_create',
                 'workflow_update_take', 'workflow_update_answer',
                 'set_concurrency_limit', 'set_throttle', 'set_worker_routing', 'workflow_route', 'sticky_workflows',
                 -- the background jobs
                 'workflow_expire', 'schedule_due', 'schedule_fire', 'schedule_drain', 'sweep_workflow_runs',
                 'sweep_dead_letters', 'sweep_outbox', 'claim_deliveries', 'finish_delivery', 'batch_flush_due',
                 'worker_expire'];
$$;

-- Grants each role of sql/roles.sql that exists its functions and nothing else: no table, no
-- sequence, no other function (EXECUTE is taken from PUBLIC on every function of the schema). Run by
-- sql/roles.sql and after every change of the functions, so a new function is granted to no one
-- until it is listed. Refuses a listed function that is missing or runs as its caller. Answers the
-- roles granted to.
CREATE OR REPLACE FUNCTION queue.grant_roles()
 RETURNS text[]
 LANGUAGE plpgsql
AS $$
DECLARE
    v_granted text[] := '{}';
    v_role    text;
    v_names   text[];
    v_fn      regprocedure;
    v_missing text;
BEGIN
    SELECT string_agg(n, ', ' ORDER BY n) INTO v_missing
      FROM unnest(queue.client_functions() || queue.worker_functions()) n
     WHERE NOT EXISTS (SELECT 1 FROM pg_proc p
                        WHERE p.pronamespace = 'queue'::regnamespace AND p.proname = n
                          AND p.prosecdef
                          AND EXISTS (SELECT 1 FROM unnest(p.proconfig) c
                                       WHERE c LIKE 'search_path=%'));
    IF v_missing IS NOT NULL THEN
        RAISE EXCEPTION 'functions granted to the roles must exist and be SECURITY DEFINER with a fixed search_path: %', v_missing;
    END IF;
    IF to_regrole('pgworkflows_client') IS NULL AND to_regrole('pgworkflows_worker') IS NULL THEN
        RETURN v_granted;
    END IF;
    REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA queue FROM PUBLIC;
    FOR v_role, v_names IN
        SELECT 'pgworkflows_client', queue.client_functions()
        UNION ALL SELECT 'pgworkflows_worker', queue.worker_functions()
    LOOP
        CONTINUE WHEN to_regrole(v_role) IS NULL;
        EXECUTE format('GRANT USAGE ON SCHEMA queue TO %I', v_role);
        EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA queue FROM %I', v_role);
        EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA queue FROM %I', v_role);
        EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA queue FROM %I', v_role);
        FOR v_fn IN
            SELECT p.oid::regprocedure FROM pg_proc p
             WHERE p.pronamespace = 'queue'::regnamespace AND p.proname = ANY (v_names)
        LOOP
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', v_fn, v_role);
        END LOOP;
        v_granted := v_granted || v_role;
    END LOOP;
    RETURN v_granted;
END $$;
