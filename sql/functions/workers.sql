-- The workers registry (schema V009__workers.sql): what each server saw of the workers that poll or
-- stream its workflows' tasks, written from the server's memory every few seconds, so that any
-- server can list every worker. Nothing here runs on the poll path.

-- An instant as the API writes it: UTC, milliseconds, "Z".
CREATE OR REPLACE FUNCTION queue.api_instant(p_at timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
$$;

-- Records what server p_server saw: each item of p_seen ({id, workflow, host, versions, slots,
-- mode, agoMs, labels}) as last seen agoMs before now (a newer sighting by another server wins), and
-- deletes each item of p_gone ({id, workflow}) that this server reported last (a worker that said
-- goodbye, or all of them when the server stops), freeing the runs that stuck to it. Rows are
-- written in key order, so two servers reporting the same workers do not deadlock.
CREATE OR REPLACE FUNCTION queue.worker_report(p_server text, p_seen jsonb, p_gone jsonb)
 RETURNS void
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_freed bigint;
BEGIN
    IF p_server IS NULL OR length(p_server) NOT BETWEEN 1 AND 255 THEN
        RAISE EXCEPTION 'server must be 1 to 255 characters' USING ERRCODE = '22023';
    END IF;
    -- The rows a report touches are locked in key order first, so that servers reporting the same
    -- workers (one seeing what another lets go) take their locks in turn.
    PERFORM 1 FROM queue.worker_seen w
     WHERE (w.worker_id, w.workflow_name) IN (
           SELECT i ->> 'id', i ->> 'workflow' FROM jsonb_array_elements(coalesce(p_seen, '[]'::jsonb)) i
           UNION
           SELECT g ->> 'id', g ->> 'workflow' FROM jsonb_array_elements(coalesce(p_gone, '[]'::jsonb)) g)
     ORDER BY w.worker_id, w.workflow_name
       FOR UPDATE OF w;
    INSERT INTO queue.worker_seen AS w (worker_id, workflow_name, server_id, host, versions, slots, mode, last_seen,
                                        labels)
    SELECT i ->> 'id', i ->> 'workflow', p_server, i ->> 'host',
           ARRAY(SELECT v::int FROM jsonb_array_elements_text(i -> 'versions') v),
           (i ->> 'slots')::int, i ->> 'mode',
           clock_timestamp() - make_interval(secs => greatest((i ->> 'agoMs')::bigint, 0) / 1000.0),
           coalesce(nullif(i -> 'labels', 'null'::jsonb), '{}'::jsonb)
      FROM jsonb_array_elements(coalesce(p_seen, '[]'::jsonb)) i
     ORDER BY i ->> 'id', i ->> 'workflow'
    ON CONFLICT (worker_id, workflow_name) DO UPDATE
        SET server_id = EXCLUDED.server_id, host = EXCLUDED.host, versions = EXCLUDED.versions,
            slots = EXCLUDED.slots, mode = EXCLUDED.mode, last_seen = EXCLUDED.last_seen, labels = EXCLUDED.labels
      WHERE EXCLUDED.last_seen >= w.last_seen;
    WITH gone AS (
        DELETE FROM queue.worker_seen w
         USING jsonb_array_elements(coalesce(p_gone, '[]'::jsonb)) g
         WHERE w.worker_id = g ->> 'id' AND w.workflow_name = g ->> 'workflow' AND w.server_id = p_server
        RETURNING w.workflow_name, w.worker_id)
    SELECT count(queue.workflow_unstick(g.workflow_name, g.worker_id)) INTO v_freed FROM gone g;
END $$;

-- Deletes up to p_limit workers not seen for p_expiry_ms, oldest first, skipping rows a report
-- holds, and frees the runs that stuck to them; returns how many went.
CREATE OR REPLACE FUNCTION queue.worker_expire(p_expiry_ms bigint, p_limit integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v_n int;
BEGIN
    PERFORM queue.check_range('expiry (milliseconds)', p_expiry_ms, 1, 86400000);
    WITH gone AS (
        DELETE FROM queue.worker_seen w
         WHERE (w.worker_id, w.workflow_name) IN (
               SELECT s.worker_id, s.workflow_name FROM queue.worker_seen s
                WHERE s.last_seen < clock_timestamp() - make_interval(secs => p_expiry_ms / 1000.0)
                ORDER BY s.last_seen
                LIMIT p_limit
                  FOR UPDATE SKIP LOCKED)
        RETURNING w.workflow_name, w.worker_id)
    SELECT count(queue.workflow_unstick(g.workflow_name, g.worker_id)) INTO v_n FROM gone g;
    RETURN v_n;
END $$;

-- The workers seen within p_expiry_ms, of one workflow or (null) of all, by workflow and worker id.
CREATE OR REPLACE FUNCTION queue.worker_list(p_workflow text, p_expiry_ms bigint)
 RETURNS SETOF queue.worker_seen
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    PERFORM queue.check_range('expiry (milliseconds)', p_expiry_ms, 1, 86400000);
    IF p_workflow IS NULL THEN
        RETURN QUERY SELECT * FROM queue.worker_seen w
                      WHERE w.last_seen > clock_timestamp() - make_interval(secs => p_expiry_ms / 1000.0)
                      ORDER BY w.workflow_name, w.worker_id;
        RETURN;
    END IF;
    PERFORM queue.check_workflow_name(p_workflow);
    RETURN QUERY SELECT * FROM queue.worker_seen w
                  WHERE w.workflow_name = p_workflow
                    AND w.last_seen > clock_timestamp() - make_interval(secs => p_expiry_ms / 1000.0)
                  ORDER BY w.worker_id;
END $$;
