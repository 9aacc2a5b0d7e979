-- Worker labels and sticky runs (schema V020__worker_routing.sql). A worker declares labels (name to
-- value); a workflow may require labels of the workers that take its tasks, prefer them, or keep
-- each run on the worker that served it (sticky). A step may need labels its worker lacks: the
-- worker hands the task to a lane of workers that have them (workflow_route).
--
-- Where a task may go is written in its message's "v": the run's version alone (any worker of that
-- version), "<version>@w:<worker>" (the worker a sticky run sticks to) or "<version>@l:<selector>"
-- (a lane). A poll receives the plain version, its own sticky lane and the lanes its labels hold;
-- nobody else even sees such a task, so routing costs the polls of unrouted workflows nothing but
-- one lookup of the workflow's routing.

-- Raises 22023 naming p_field unless p_labels is a JSON object of p_min to 20 labels, each name
-- lower-case letters, digits and ._/- (1 to 63, starting and ending with a letter or digit), each
-- value a string of letters, digits and ._:/- (1 to 63, starting and ending with a letter or digit).
CREATE OR REPLACE FUNCTION queue.check_labels(p_field text, p_labels jsonb, p_min integer)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
DECLARE
    e record;
BEGIN
    IF jsonb_typeof(p_labels) IS DISTINCT FROM 'object'
       OR (SELECT count(*) FROM jsonb_object_keys(p_labels)) NOT BETWEEN p_min AND 20 THEN
        RAISE EXCEPTION '% must be an object of % to 20 labels, name to value', p_field, p_min
            USING ERRCODE = '22023';
    END IF;
    FOR e IN SELECT * FROM jsonb_each(p_labels) LOOP
        IF e.key !~ '^[a-z0-9]([a-z0-9._/-]{0,61}[a-z0-9])?$' THEN
            RAISE EXCEPTION '% has a label name "%" that is not 1 to 63 lower-case letters, digits and ._/- starting and ending with a letter or digit',
                p_field, left(e.key, 80) USING ERRCODE = '22023';
        END IF;
        IF jsonb_typeof(e.value) <> 'string' OR e.value #>> '{}' !~ '^[A-Za-z0-9]([A-Za-z0-9._:/-]{0,61}[A-Za-z0-9])?$' THEN
            RAISE EXCEPTION '%.% must be a string of 1 to 63 letters, digits and ._:/- starting and ending with a letter or digit',
                p_field, e.key USING ERRCODE = '22023';
        END IF;
    END LOOP;
END $$;

-- A selector as a lane's name: its labels as name=value, by name, comma-separated.
CREATE OR REPLACE FUNCTION queue.lane_of(p_selector jsonb)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT string_agg(e.key || '=' || (e.value #>> '{}'), ',' ORDER BY e.key) FROM jsonb_each(p_selector) e;
$$;

-- The "v" of a run's new task: its version, or the lane of the worker it sticks to.
CREATE OR REPLACE FUNCTION queue.task_v(p_version integer, p_sticky_worker text)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT CASE WHEN p_sticky_worker IS NULL THEN to_jsonb(p_version)
                ELSE to_jsonb(p_version || '@w:' || p_sticky_worker) END;
$$;

-- Whether the registry lists a worker of workflow p_name whose labels hold p_selector.
CREATE OR REPLACE FUNCTION queue.labelled_worker_listed(p_name text, p_selector jsonb)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $$
    SELECT EXISTS (SELECT 1 FROM queue.worker_seen w
                    WHERE w.workflow_name = p_name AND w.labels @> p_selector);
$$;

-- Whether a worker with labels p_labels may take tasks of workflow p_name under its routing row
-- p_routing (null: no routing, any worker may): its labels hold require, and prefer too while the
-- registry lists a worker whose labels do.
CREATE OR REPLACE FUNCTION queue.worker_may_take(p_name text, p_routing queue.worker_routing, p_labels jsonb)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $$
    SELECT p_routing.workflow_name IS NULL
        OR ((p_routing.require IS NULL OR coalesce(p_labels, '{}'::jsonb) @> p_routing.require)
            AND (p_routing.prefer IS NULL OR coalesce(p_labels, '{}'::jsonb) @> p_routing.prefer
                 OR NOT queue.labelled_worker_listed(p_name, p_routing.prefer)));
$$;

-- Sets which workers take workflow p_name's tasks: require and prefer (label selectors; null: none)
-- and sticky. With none of them the workflow has no routing. Runs already sticking to a worker stay
-- with it when sticky is turned off; their next tasks go to any worker.
CREATE OR REPLACE FUNCTION queue.set_worker_routing(p_name text, p_require jsonb, p_prefer jsonb, p_sticky boolean DEFAULT false)
 RETURNS queue.worker_routing
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    w queue.worker_routing;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    p_require := nullif(p_require, 'null'::jsonb);
    p_prefer := nullif(p_prefer, 'null'::jsonb);
    IF p_require IS NOT NULL THEN
        PERFORM queue.check_labels('require', p_require, 1);
    END IF;
    IF p_prefer IS NOT NULL THEN
        PERFORM queue.check_labels('prefer', p_prefer, 1);
    END IF;
    IF p_require IS NULL AND p_prefer IS NULL AND NOT coalesce(p_sticky, false) THEN
        DELETE FROM queue.worker_routing wr WHERE wr.workflow_name = p_name;
        RETURN w;
    END IF;
    INSERT INTO queue.worker_routing AS wr (workflow_name, require, prefer, sticky)
    VALUES (p_name, p_require, p_prefer, coalesce(p_sticky, false))
    ON CONFLICT (workflow_name) DO UPDATE
        SET require = EXCLUDED.require, prefer = EXCLUDED.prefer, sticky = EXCLUDED.sticky, updated_at = now()
    RETURNING * INTO w;
    RETURN w;
END $$;

-- A workflow's routing (no row when it has none).
CREATE OR REPLACE FUNCTION queue.worker_routing_of(p_name text)
 RETURNS SETOF queue.worker_routing
 LANGUAGE sql
 STABLE
AS $$
    SELECT * FROM queue.worker_routing WHERE workflow_name = p_name;
$$;

-- The workflows whose runs stick to their worker (the engine keeps each such worker's polls a
-- kind of their own).
CREATE OR REPLACE FUNCTION queue.sticky_workflows()
 RETURNS SETOF text
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT workflow_name FROM queue.worker_routing WHERE sticky ORDER BY workflow_name;
$$;

-- Hands the task a worker holds (p_msg_id under p_receipt) to the workers whose labels hold
-- p_selector, for a step that needs them: the task goes to that lane, due now, this delivery not
-- counted. With p_soft (a step that prefers the labels) the task is handed on only while the
-- registry lists such a worker. Answers 'routed', 'run_here' (p_soft and no such worker: the
-- caller runs the step itself), 'stale' (the receipt no longer holds the lease) or 'not_running'.
CREATE OR REPLACE FUNCTION queue.workflow_route(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_selector jsonb, p_soft boolean DEFAULT false)
 RETURNS text
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r       queue.workflow_run;
    v_queue text;
    v_lane  text;
    v_n     int;
BEGIN
    PERFORM queue.check_labels('labels', p_selector, 1);
    r := queue.workflow_lock(p_run_id);
    IF r.status <> 'running' THEN
        RETURN 'not_running';
    END IF;
    IF r.current_msg_id IS DISTINCT FROM p_msg_id THEN
        RETURN 'stale';
    END IF;
    IF coalesce(p_soft, false) AND NOT queue.labelled_worker_listed(r.workflow_name, p_selector) THEN
        RETURN 'run_here';
    END IF;
    v_queue := '__wf_' || r.workflow_name;
    v_lane := queue.lane_of(p_selector);
    INSERT INTO queue.route_lane (workflow_name, lane, selector)
    VALUES (r.workflow_name, v_lane, p_selector)
    ON CONFLICT DO NOTHING;
    EXECUTE format('UPDATE queue.%I q SET vt = clock_timestamp(), read_ct = greatest(q.read_ct - 1, 0),'
                   ' body = q.body || jsonb_build_object(''v'', $3::text)'
                   ' WHERE q.msg_id = $1 AND queue.receipt_of(q.vt) = $2', 'q_' || v_queue)
        USING p_msg_id, p_receipt, r.workflow_version || '@l:' || v_lane;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    IF v_n = 0 THEN
        RETURN 'stale';
    END IF;
    PERFORM pg_notify('queue_wakeup', v_queue);
    RETURN 'routed';
END $$;

-- Frees the runs of workflow p_name that stick to worker p_worker (it left, or was not seen for the
-- registry's expiry): their queued tasks go to any worker, and the next worker to take one keeps
-- the run. Returns how many runs were freed.
CREATE OR REPLACE FUNCTION queue.workflow_unstick(p_name text, p_worker text)
 RETURNS integer
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_runs bigint[];
BEGIN
    WITH freed AS (
        UPDATE queue.workflow_run wr SET sticky_worker = NULL
         WHERE wr.workflow_name = p_name AND wr.sticky_worker = p_worker
        RETURNING wr.run_id, wr.workflow_version)
    SELECT array_agg(f.run_id) INTO v_runs FROM freed f;
    IF v_runs IS NULL THEN
        RETURN 0;
    END IF;
    IF EXISTS (SELECT 1 FROM queue.queue_meta m WHERE m.queue_name = '__wf_' || p_name) THEN
        EXECUTE format('UPDATE queue.%I q SET body = q.body || jsonb_build_object(''v'', split_part(q.body ->> ''v'', ''@'', 1)::int)'
                       ' WHERE q.group_id = ANY ($1) AND q.body ->> ''v'' = split_part(q.body ->> ''v'', ''@'', 1) || ''@w:'' || $2',
                       'q___wf_' || p_name)
            USING ARRAY(SELECT r::text FROM unnest(v_runs) r), p_worker;
        PERFORM pg_notify('queue_wakeup', '__wf_' || p_name);
    END IF;
    RETURN cardinality(v_runs);
END $$;
