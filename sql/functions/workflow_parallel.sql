-- Parallel steps: the finished branches of a run's parallel group journaled together under the
-- run's lease, which carries on.

-- Journals finished run steps of a running run under its lease, after its journal in array order,
-- each at most once (one already journaled is not rewritten); the lease carries on and the run's
-- next step counts its attempts from 1. Answers ok with how many rows were new, or stale or
-- not_running with none written.
CREATE OR REPLACE FUNCTION queue.workflow_journal_steps(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_steps jsonb)
 RETURNS TABLE(outcome text, journaled integer)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r       queue.workflow_run;
    v_queue text;
    v_bad   text;
    v_ct    int;
    v_i     bigint;
    v_state jsonb;
    v_acc   jsonb;
BEGIN
    IF p_steps IS NULL OR jsonb_typeof(p_steps) <> 'array' THEN
        RAISE EXCEPTION 'steps must be a JSON array' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('steps', jsonb_array_length(p_steps), 1, 1000);
    SELECT CASE WHEN jsonb_typeof(e.s) <> 'object' THEN format('steps[%s] must be an object', e.i - 1)
                WHEN e.s ->> 'kind' IS DISTINCT FROM 'run' THEN format('steps[%s].kind must be run', e.i - 1)
                WHEN jsonb_typeof(e.s -> 'error') NOT IN ('object', 'null')
                     OR (jsonb_typeof(e.s -> 'error') = 'object'
                         AND (jsonb_typeof(e.s -> 'error' -> 'type') IS DISTINCT FROM 'string'
                              OR jsonb_typeof(e.s -> 'error' -> 'message') IS DISTINCT FROM 'string'))
                     THEN format('steps[%s].error must be an object with a string type and a string message', e.i - 1)
                WHEN jsonb_typeof(e.s -> 'startedAt') NOT IN ('string', 'null')
                     THEN format('steps[%s].startedAt must be a date-time', e.i - 1)
           END
      INTO v_bad
      FROM jsonb_array_elements(p_steps) WITH ORDINALITY e(s, i)
     WHERE jsonb_typeof(e.s) <> 'object' OR e.s ->> 'kind' IS DISTINCT FROM 'run'
        OR jsonb_typeof(e.s -> 'error') NOT IN ('object', 'null')
        OR (jsonb_typeof(e.s -> 'error') = 'object'
            AND (jsonb_typeof(e.s -> 'error' -> 'type') IS DISTINCT FROM 'string'
                 OR jsonb_typeof(e.s -> 'error' -> 'message') IS DISTINCT FROM 'string'))
        OR jsonb_typeof(e.s -> 'startedAt') NOT IN ('string', 'null')
     ORDER BY e.i
     LIMIT 1;
    IF v_bad IS NOT NULL THEN
        RAISE EXCEPTION '%', v_bad USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_step_name(e.s ->> 'name') FROM jsonb_array_elements(p_steps) e(s);
    SELECT n INTO v_bad
      FROM (SELECT e.s ->> 'name' AS n FROM jsonb_array_elements(p_steps) e(s)) x
     GROUP BY n HAVING count(*) > 1
     LIMIT 1;
    IF v_bad IS NOT NULL THEN
        RAISE EXCEPTION 'step "%" is in steps twice', v_bad USING ERRCODE = '22023';
    END IF;

    r := queue.workflow_lock(p_run_id);
    IF r.status <> 'running' THEN
        RETURN QUERY SELECT 'not_running'::text, 0;
        RETURN;
    END IF;
    IF r.current_msg_id IS DISTINCT FROM p_msg_id THEN
        RETURN QUERY SELECT 'stale'::text, 0;
        RETURN;
    END IF;
    -- Each step's state changes: checked alone, then the run's key count once with all of them made
    -- in array order; only past the limit are the steps counted one by one, to name the first that
    -- crosses it. Steps without state cost one look at the array.
    IF jsonb_path_exists(p_steps, '$[*] ? (exists(@.state) && @.state != null)') THEN
        v_acc := '{}'::jsonb;
        FOR v_i, v_state IN
            SELECT e.i, e.s -> 'state' FROM jsonb_array_elements(p_steps) WITH ORDINALITY e(s, i)
             WHERE e.s -> 'state' <> 'null'::jsonb ORDER BY e.i
        LOOP
            PERFORM queue.check_run_state(format('steps[%s].state', v_i - 1), NULL, v_state);
            v_acc := v_acc || v_state;
        END LOOP;
        IF queue.run_state_keys(p_run_id, v_acc) > 100 THEN
            v_acc := '{}'::jsonb;
            FOR v_i, v_state IN
                SELECT e.i, e.s -> 'state' FROM jsonb_array_elements(p_steps) WITH ORDINALITY e(s, i)
                 WHERE e.s -> 'state' <> 'null'::jsonb ORDER BY e.i
            LOOP
                v_acc := v_acc || v_state;
                PERFORM queue.check_run_state(format('steps[%s].state', v_i - 1), p_run_id, v_acc);
            END LOOP;
        END IF;
    END IF;
    -- The held message, where the receipt still holds its lease: locked, its count restarted for
    -- the run's next step (its old value is these steps' attempts), its lease left as it is.
    v_queue := '__wf_' || r.workflow_name;
    EXECUTE queue.prepared_sql('wf_journal_' || v_queue, 'q_' || v_queue, $q$
        WITH o AS (
            SELECT q.read_ct,
                   q.read_ct <> 1 OR q.body ->> 'reason' IS DISTINCT FROM 'resume' AS touched
              FROM queue.%1$I q
             WHERE q.msg_id = $1 AND queue.receipt_of(q.vt) = $2
               FOR UPDATE),
             u AS (
            UPDATE queue.%1$I q
               SET read_ct = 1,
                   body = CASE WHEN q.body ->> 'reason' = 'resume' THEN q.body
                               ELSE q.body || '{"reason": "resume"}'::jsonb END
              FROM o
             WHERE q.msg_id = $1 AND o.touched
            RETURNING q.msg_id)
        SELECT o.read_ct FROM o$q$,
        'bigint, bigint',
        format('%L, %L', p_msg_id, p_receipt))
        INTO v_ct;
    IF v_ct IS NULL THEN
        RETURN QUERY SELECT 'stale'::text, 0;
        RETURN;
    END IF;

    RETURN QUERY
    WITH ins AS (
        INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, error, attempts, started_at,
                                         state, state_version)
        SELECT p_run_id, n.name,
               (SELECT coalesce(max(w.seq), 0) FROM queue.workflow_step w WHERE w.run_id = p_run_id)
                 + row_number() OVER (ORDER BY n.i),
               'run', n.output, n.error, greatest(v_ct, 1), coalesce(n.started_at, now()), n.state,
               CASE WHEN n.state IS NOT NULL THEN nextval('queue.workflow_state_version_seq') END
          FROM (SELECT e.i, e.s ->> 'name' AS name, e.s -> 'output' AS output,
                       nullif(e.s -> 'error', 'null'::jsonb) AS error,
                       nullif(e.s -> 'state', 'null'::jsonb) AS state,
                       (e.s ->> 'startedAt')::timestamptz AS started_at
                  FROM jsonb_array_elements(p_steps) WITH ORDINALITY e(s, i)
                 WHERE NOT EXISTS (SELECT 1 FROM queue.workflow_step w
                                    WHERE w.run_id = p_run_id AND w.step_name = e.s ->> 'name')) n
        ON CONFLICT DO NOTHING
        RETURNING 1)
    SELECT 'ok'::text, count(*)::int FROM ins;
END $$;
