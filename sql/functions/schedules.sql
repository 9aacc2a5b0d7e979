-- Cron schedules: made, changed, paused and deleted through the API or registered by workers from
-- their definitions; the ticker's due query and the tick itself. Ticks are computed by the server
-- (its cron parser is Java's); these functions store them and start the runs.

-- Raises 22023 naming the field unless name, workflow, cron, zone and catch-up settings are
-- acceptable (the cron expression's meaning and the zone's existence are checked by the server).
CREATE OR REPLACE FUNCTION queue.schedule_check(p_name text, p_workflow text, p_cron text, p_zone text, p_catch_up text, p_max_catch_up integer)
 RETURNS void
 LANGUAGE plpgsql
AS $$
BEGIN
    IF p_name IS NULL OR p_name !~ '^[a-z0-9_-]{1,64}$' THEN
        RAISE EXCEPTION 'schedule name must be 1 to 64 characters of a-z, 0-9, "_" and "-"'
            USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_workflow_name(p_workflow);
    IF p_cron IS NULL OR length(p_cron) NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'cron must be 1 to 256 characters' USING ERRCODE = '22023';
    END IF;
    IF p_zone IS NULL OR length(p_zone) NOT BETWEEN 1 AND 64 THEN
        RAISE EXCEPTION 'zone must be 1 to 64 characters' USING ERRCODE = '22023';
    END IF;
    IF p_catch_up IS NULL OR p_catch_up NOT IN ('skip', 'latest', 'all') THEN
        RAISE EXCEPTION 'catchUp must be skip, latest or all' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('maxCatchUp', p_max_catch_up, 1, 1000);
END $$;

-- Makes a schedule (source 'api' or 'code'); 42710 when one of that name exists.
CREATE OR REPLACE FUNCTION queue.schedule_create(p_name text, p_workflow text, p_cron text, p_zone text, p_input jsonb, p_catch_up text, p_max_catch_up integer, p_next_tick timestamp with time zone, p_source text DEFAULT 'api'::text)
 RETURNS SETOF queue.schedule
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    PERFORM queue.schedule_check(p_name, p_workflow, p_cron, p_zone, p_catch_up, p_max_catch_up);
    RETURN QUERY
        -- One reading of the clock for both times: two defaults could differ by a microsecond.
        INSERT INTO queue.schedule AS s (name, workflow_name, cron, zone, input, catch_up, max_catch_up,
                                         next_tick, source, created_at, updated_at)
        SELECT p_name, p_workflow, p_cron, p_zone, p_input, p_catch_up, p_max_catch_up, p_next_tick,
               p_source, t.now, t.now
          FROM (SELECT clock_timestamp() AS now) t
        ON CONFLICT (name) DO NOTHING
        RETURNING s.*;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schedule "%" already exists', p_name USING ERRCODE = '42710';
    END IF;
END $$;

-- Changes a schedule's workflow, cron, zone, input and catch-up; P0002 when there is none. A new
-- cron or zone takes p_next_tick (computed from now); otherwise the next tick stays, so ticks missed
-- meanwhile are still caught up. Its source stays.
CREATE OR REPLACE FUNCTION queue.schedule_update(p_name text, p_workflow text, p_cron text, p_zone text, p_input jsonb, p_catch_up text, p_max_catch_up integer, p_next_tick timestamp with time zone)
 RETURNS SETOF queue.schedule
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    PERFORM queue.schedule_check(p_name, p_workflow, p_cron, p_zone, p_catch_up, p_max_catch_up);
    RETURN QUERY
        UPDATE queue.schedule s
           SET workflow_name = p_workflow, cron = p_cron, zone = p_zone, input = p_input,
               catch_up = p_catch_up, max_catch_up = p_max_catch_up,
               next_tick = CASE WHEN s.cron = p_cron AND s.zone = p_zone AND s.next_tick IS NOT NULL
                                THEN s.next_tick ELSE p_next_tick END,
               updated_at = clock_timestamp()
         WHERE s.name = p_name
        RETURNING s.*;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schedule "%" does not exist', p_name USING ERRCODE = 'P0002';
    END IF;
END $$;

-- A worker's schedule from its workflow's definition (source 'code'): made when absent, changed
-- when it differs (as schedule_update), left alone when it is the same; paused stays as it is.
-- 42710 when the name belongs to a schedule made through the API or to another workflow's.
-- Answers the row and whether it was made or changed.
CREATE OR REPLACE FUNCTION queue.schedule_register(p_name text, p_workflow text, p_cron text, p_zone text, p_input jsonb, p_catch_up text, p_max_catch_up integer, p_next_tick timestamp with time zone)
 RETURNS TABLE(schedule queue.schedule, changed boolean)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v queue.schedule;
BEGIN
    PERFORM queue.schedule_check(p_name, p_workflow, p_cron, p_zone, p_catch_up, p_max_catch_up);
    -- One reading of the clock for both times: two defaults could differ by a microsecond.
    INSERT INTO queue.schedule AS s (name, workflow_name, cron, zone, input, catch_up, max_catch_up,
                                     next_tick, source, created_at, updated_at)
    SELECT p_name, p_workflow, p_cron, p_zone, p_input, p_catch_up, p_max_catch_up, p_next_tick,
           'code', t.now, t.now
      FROM (SELECT clock_timestamp() AS now) t
    ON CONFLICT (name) DO NOTHING
    RETURNING s.* INTO v;
    IF v.name IS NOT NULL THEN
        RETURN QUERY SELECT v, true;
        RETURN;
    END IF;
    SELECT * INTO v FROM queue.schedule s WHERE s.name = p_name FOR UPDATE;
    IF v.name IS NULL THEN
        RAISE EXCEPTION 'schedule "%" was deleted meanwhile', p_name USING ERRCODE = '40001';
    END IF;
    IF v.source <> 'code' THEN
        RAISE EXCEPTION 'schedule "%" was made through the API; a worker may not change it', p_name
            USING ERRCODE = '42710';
    END IF;
    IF v.workflow_name <> p_workflow THEN
        RAISE EXCEPTION 'schedule "%" belongs to workflow "%"', p_name, v.workflow_name
            USING ERRCODE = '42710';
    END IF;
    IF v.cron = p_cron AND v.zone = p_zone AND v.input IS NOT DISTINCT FROM p_input
       AND v.catch_up = p_catch_up AND v.max_catch_up = p_max_catch_up THEN
        RETURN QUERY SELECT v, false;
        RETURN;
    END IF;
    RETURN QUERY
        SELECT u, true FROM queue.schedule_update(p_name, p_workflow, p_cron, p_zone, p_input, p_catch_up,
                                                  p_max_catch_up, p_next_tick) u;
END $$;

-- Pauses a schedule (p_paused true) or resumes it from p_next_tick, the first tick after now: ticks
-- that fell while it was paused are not caught up. P0002 when there is none.
CREATE OR REPLACE FUNCTION queue.schedule_pause(p_name text, p_paused boolean, p_next_tick timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS SETOF queue.schedule
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    RETURN QUERY
        UPDATE queue.schedule s
           SET paused = p_paused,
               next_tick = CASE WHEN p_paused OR NOT s.paused THEN s.next_tick ELSE p_next_tick END,
               updated_at = clock_timestamp()
         WHERE s.name = p_name
        RETURNING s.*;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schedule "%" does not exist', p_name USING ERRCODE = 'P0002';
    END IF;
END $$;

-- Deletes a schedule; returns whether it existed. Runs it started are left alone.
CREATE OR REPLACE FUNCTION queue.schedule_delete(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    DELETE FROM queue.schedule s WHERE s.name = p_name;
    RETURN FOUND;
END $$;

-- One schedule by name (no row when there is none).
CREATE OR REPLACE FUNCTION queue.schedule_get(p_name text)
 RETURNS SETOF queue.schedule
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    RETURN QUERY SELECT * FROM queue.schedule s WHERE s.name = p_name;
END $$;

-- Every schedule, by name.
CREATE OR REPLACE FUNCTION queue.schedule_list()
 RETURNS SETOF queue.schedule
 LANGUAGE plpgsql
 STABLE
AS $$
BEGIN
    RETURN QUERY SELECT * FROM queue.schedule s ORDER BY s.name;
END $$;

-- Up to p_limit schedules due by p_now (not paused, next tick passed), earliest first, locked for
-- the caller's transaction; those another server holds are skipped, so servers share the work.
CREATE OR REPLACE FUNCTION queue.schedule_due(p_now timestamp with time zone, p_limit integer DEFAULT 100)
 RETURNS SETOF queue.schedule
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    RETURN QUERY
        SELECT * FROM queue.schedule s
         WHERE NOT s.paused AND s.next_tick <= p_now
         ORDER BY s.next_tick
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED;
END $$;

-- A tick's time as the run's key and input carry it: an ISO instant in UTC to the second.
CREATE OR REPLACE FUNCTION queue.schedule_instant(p_tick timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT to_char(p_tick AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
$$;

-- Runs a schedule's ticks, under its row's lock: if its next tick is still p_due (no other server
-- ran it) and it is not paused, starts one run per tick of p_ticks (oldest first; none skips them)
-- with idempotency key __schedule/<name>/<tick>, and moves next_tick to p_next. A run's input is
-- the schedule's input with "scheduledAt": "<tick>" set when it is an object (replacing a
-- scheduledAt of its own) or absent; any other input goes as it is. Answers the runs: none when
-- another server took the tick.
CREATE OR REPLACE FUNCTION queue.schedule_fire(p_name text, p_due timestamp with time zone, p_ticks timestamp with time zone[], p_next timestamp with time zone, p_max_retention_days integer DEFAULT 365)
 RETURNS TABLE(tick timestamp with time zone, workflow_name text, run_id bigint, created boolean)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v     queue.schedule;
    t     timestamptz;
    v_at  text;
    v_in  jsonb;
    v_run record;
    v_prev timestamptz;
BEGIN
    SELECT * INTO v FROM queue.schedule s WHERE s.name = p_name FOR UPDATE;
    IF v.name IS NULL OR v.paused OR v.next_tick IS DISTINCT FROM p_due THEN
        RETURN;
    END IF;
    PERFORM queue.check_range('ticks', coalesce(cardinality(p_ticks), 0), 0, 1000);
    IF p_next IS NOT NULL AND p_next <= p_due THEN
        RAISE EXCEPTION 'the next tick must come after the due one' USING ERRCODE = '22023';
    END IF;
    FOREACH t IN ARRAY coalesce(p_ticks, '{}'::timestamptz[]) LOOP
        IF t < p_due OR t >= p_next OR t <= v_prev OR date_trunc('second', t) <> t THEN
            RAISE EXCEPTION 'ticks must be whole seconds in order from the due tick to before the next'
                USING ERRCODE = '22023';
        END IF;
        v_prev := t;
        v_at := queue.schedule_instant(t);
        v_in := CASE
                    WHEN v.input IS NULL OR jsonb_typeof(v.input) = 'null'
                        THEN jsonb_build_object('scheduledAt', v_at)
                    WHEN jsonb_typeof(v.input) = 'object'
                        THEN v.input || jsonb_build_object('scheduledAt', v_at)
                    ELSE v.input
                END;
        SELECT * INTO v_run FROM queue.workflow_start(
            p_name => v.workflow_name,
            p_input => v_in,
            p_idempotency_key => '__schedule/' || v.name || '/' || v_at,
            p_max_retention_days => p_max_retention_days) w;
        tick := t;
        workflow_name := v.workflow_name;
        run_id := v_run.run_id;
        created := v_run.created;
        RETURN NEXT;
    END LOOP;
    UPDATE queue.schedule s
       SET next_tick = p_next, last_tick = coalesce(v_prev, s.last_tick)
     WHERE s.name = p_name;
END $$;
