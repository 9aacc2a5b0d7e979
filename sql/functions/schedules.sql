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
-- that fell while it was paused are not caught up, and its failed runs in a row count from 0 again.
-- P0002 when there is none.
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
               failures_in_row = CASE WHEN p_paused OR NOT s.paused THEN s.failures_in_row ELSE 0 END,
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

-- Raises 22023 unless p_ticks are whole seconds in increasing order, from p_from to before p_before
-- when those are given (a fire's due and next ticks).
CREATE OR REPLACE FUNCTION queue.schedule_check_ticks(p_ticks timestamp with time zone[], p_from timestamp with time zone, p_before timestamp with time zone)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
DECLARE
    t      timestamptz;
    v_prev timestamptz;
BEGIN
    FOREACH t IN ARRAY coalesce(p_ticks, '{}'::timestamptz[]) LOOP
        IF t < p_from OR t >= p_before OR t <= v_prev OR date_trunc('second', t) <> t THEN
            RAISE EXCEPTION 'ticks must be whole seconds in order%',
                CASE WHEN p_from IS NULL THEN '' ELSE ' from the due tick to before the next' END
                USING ERRCODE = '22023';
        END IF;
        v_prev := t;
    END LOOP;
END $$;

-- Starts the run of tick p_tick of schedule v (its row locked by the caller) and makes it the
-- schedule's last run. Its key is __schedule/<name>/<tick>, so a tick already run answers its run
-- (created false). The input is the schedule's with "scheduledAt": "<tick>" set when it is an
-- object (replacing a scheduledAt of its own) or absent; any other input goes as it is.
CREATE OR REPLACE FUNCTION queue.schedule_start_tick(v queue.schedule, p_tick timestamp with time zone, p_max_retention_days integer)
 RETURNS TABLE(run_id bigint, created boolean)
 LANGUAGE plpgsql
AS $$
DECLARE
    v_at  text := queue.schedule_instant(p_tick);
    v_in  jsonb;
    v_run record;
BEGIN
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
    UPDATE queue.schedule s SET last_run_id = v_run.run_id WHERE s.name = v.name;
    run_id := v_run.run_id;
    created := v_run.created;
    RETURN NEXT;
END $$;

-- Counts the end of schedule p_name's last run (its row locked by the caller), once: a failed run
-- adds one to the failures in a row, any other end sets them to 0. With pause_after_failures
-- reached, the schedule is paused. Answers whether it is paused now.
CREATE OR REPLACE FUNCTION queue.schedule_count_failures(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $$
DECLARE
    v        queue.schedule;
    v_status queue.workflow_status;
BEGIN
    SELECT * INTO v FROM queue.schedule s WHERE s.name = p_name;
    IF v.last_run_id IS NOT NULL AND v.last_run_id IS DISTINCT FROM v.counted_run_id THEN
        SELECT wr.status INTO v_status FROM queue.workflow_run wr WHERE wr.run_id = v.last_run_id;
        IF v_status IS DISTINCT FROM 'running' THEN
            UPDATE queue.schedule s
               SET failures_in_row = CASE WHEN v_status = 'failed' THEN s.failures_in_row + 1 ELSE 0 END,
                   counted_run_id = v.last_run_id,
                   paused = s.paused OR (v_status = 'failed'
                                         AND (s.failures_in_row + 1 >= s.pause_after_failures) IS TRUE),
                   updated_at = CASE WHEN v_status = 'failed'
                                          AND (s.failures_in_row + 1 >= s.pause_after_failures) IS TRUE
                                     THEN clock_timestamp() ELSE s.updated_at END
             WHERE s.name = p_name
            RETURNING * INTO v;
        END IF;
    END IF;
    RETURN v.paused;
END $$;

-- One tick of schedule p_name (its row locked by the caller), under its overlap policy: while its
-- last run runs (or ticks are buffered before this one), skip drops the tick, buffer_one keeps it
-- when none is kept yet, buffer_all keeps it (up to 1000), cancel_other cancels the running run;
-- otherwise, and under allow_all, the tick's run starts. Answers 'started' (with the run),
-- 'buffered' or 'skipped'.
CREATE OR REPLACE FUNCTION queue.schedule_tick(p_name text, p_tick timestamp with time zone, p_max_retention_days integer)
 RETURNS TABLE(outcome text, run_id bigint, created boolean)
 LANGUAGE plpgsql
AS $$
DECLARE
    v         queue.schedule;
    v_running boolean;
BEGIN
    SELECT * INTO v FROM queue.schedule s WHERE s.name = p_name;
    v_running := v.last_run_id IS NOT NULL
                 AND EXISTS (SELECT 1 FROM queue.workflow_run wr
                              WHERE wr.run_id = v.last_run_id AND wr.status = 'running');
    IF v.overlap <> 'allow_all' AND (v_running OR cardinality(v.buffered) > 0) THEN
        IF v.overlap = 'skip'
           OR (v.overlap = 'buffer_one' AND cardinality(v.buffered) > 0)
           OR (v.overlap = 'buffer_all' AND cardinality(v.buffered) >= 1000) THEN
            outcome := 'skipped';
            RETURN NEXT;
            RETURN;
        END IF;
        IF v.overlap IN ('buffer_one', 'buffer_all') THEN
            UPDATE queue.schedule s SET buffered = s.buffered || p_tick WHERE s.name = p_name;
            outcome := 'buffered';
            RETURN NEXT;
            RETURN;
        END IF;
        IF v_running THEN
            PERFORM queue.workflow_cancel(v.last_run_id);
        END IF;
    END IF;
    SELECT t.run_id, t.created INTO run_id, created FROM queue.schedule_start_tick(v, p_tick, p_max_retention_days) t;
    outcome := 'started';
    RETURN NEXT;
END $$;

-- Runs a schedule's ticks, under its row's lock: if its next tick is still p_due (no other server
-- ran it) and it is not paused (nor paused now because its last run made too many failures in a
-- row), takes each tick of p_ticks (oldest first; none skips them) under the schedule's overlap
-- policy (schedule_tick) and moves next_tick to p_next. Answers the runs it started: none when
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
    v      queue.schedule;
    t      timestamptz;
    v_prev timestamptz;
    x      record;
BEGIN
    SELECT * INTO v FROM queue.schedule s WHERE s.name = p_name FOR UPDATE;
    IF v.name IS NULL OR v.paused OR v.next_tick IS DISTINCT FROM p_due THEN
        RETURN;
    END IF;
    PERFORM queue.check_range('ticks', coalesce(cardinality(p_ticks), 0), 0, 1000);
    IF p_next IS NOT NULL AND p_next <= p_due THEN
        RAISE EXCEPTION 'the next tick must come after the due one' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.schedule_check_ticks(p_ticks, p_due, p_next);
    v_prev := p_ticks[cardinality(p_ticks)];
    IF queue.schedule_count_failures(p_name) THEN
        RETURN;
    END IF;
    FOREACH t IN ARRAY coalesce(p_ticks, '{}'::timestamptz[]) LOOP
        SELECT * INTO x FROM queue.schedule_tick(p_name, t, p_max_retention_days);
        IF x.outcome = 'started' THEN
            tick := t;
            workflow_name := v.workflow_name;
            run_id := x.run_id;
            created := x.created;
            RETURN NEXT;
        END IF;
    END LOOP;
    UPDATE queue.schedule s
       SET next_tick = p_next, last_tick = coalesce(v_prev, s.last_tick)
     WHERE s.name = p_name;
END $$;

-- Starts the buffered ticks whose turn has come: of up to p_limit schedules with ticks buffered
-- (skipping those another server holds), each whose last run no longer runs starts its oldest
-- buffered tick, unless its failures in a row paused it. Answers the runs started.
CREATE OR REPLACE FUNCTION queue.schedule_drain(p_limit integer DEFAULT 100, p_max_retention_days integer DEFAULT 365)
 RETURNS TABLE(schedule_name text, tick timestamp with time zone, workflow_name text, run_id bigint, created boolean)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v queue.schedule;
    x record;
BEGIN
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    FOR v IN SELECT * FROM queue.schedule s
              WHERE cardinality(s.buffered) > 0 AND NOT s.paused
              ORDER BY s.name
              LIMIT p_limit
                FOR UPDATE SKIP LOCKED LOOP
        CONTINUE WHEN v.last_run_id IS NOT NULL
                      AND EXISTS (SELECT 1 FROM queue.workflow_run wr
                                   WHERE wr.run_id = v.last_run_id AND wr.status = 'running');
        CONTINUE WHEN queue.schedule_count_failures(v.name);
        UPDATE queue.schedule s SET buffered = s.buffered[2:] WHERE s.name = v.name;
        SELECT * INTO x FROM queue.schedule_start_tick(v, v.buffered[1], p_max_retention_days);
        schedule_name := v.name;
        tick := v.buffered[1];
        workflow_name := v.workflow_name;
        run_id := x.run_id;
        created := x.created;
        RETURN NEXT;
    END LOOP;
END $$;

-- Sets a schedule's overlap policy and the failed runs in a row that pause it (null: never); P0002
-- when there is none. Ticks already buffered stay.
CREATE OR REPLACE FUNCTION queue.schedule_set_policy(p_name text, p_overlap text, p_pause_after_failures integer)
 RETURNS SETOF queue.schedule
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
BEGIN
    IF p_overlap IS NULL OR p_overlap NOT IN ('allow_all', 'skip', 'buffer_one', 'buffer_all', 'cancel_other') THEN
        RAISE EXCEPTION 'overlap must be allow_all, skip, buffer_one, buffer_all or cancel_other'
            USING ERRCODE = '22023';
    END IF;
    IF p_pause_after_failures IS NOT NULL THEN
        PERFORM queue.check_range('pauseAfterFailures', p_pause_after_failures, 1, 1000);
    END IF;
    RETURN QUERY
        UPDATE queue.schedule s
           SET overlap = p_overlap, pause_after_failures = p_pause_after_failures,
               updated_at = CASE WHEN s.overlap = p_overlap
                                      AND s.pause_after_failures IS NOT DISTINCT FROM p_pause_after_failures
                                 THEN s.updated_at ELSE clock_timestamp() END
         WHERE s.name = p_name
        RETURNING s.*;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schedule "%" does not exist', p_name USING ERRCODE = 'P0002';
    END IF;
END $$;

-- Runs a past range of a schedule's ticks now, as if at their ticks (p_ticks, whole seconds in
-- order, 1 to 1000, computed by the server from the schedule's cron), under its lock and its overlap
-- policy, paused or not; its next tick is left alone. A tick already run answers its run (created false). Answers
-- each tick's outcome. P0002 when there is no such schedule.
CREATE OR REPLACE FUNCTION queue.schedule_backfill(p_name text, p_ticks timestamp with time zone[], p_max_retention_days integer DEFAULT 365)
 RETURNS TABLE(tick timestamp with time zone, outcome text, run_id bigint, created boolean)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    v      queue.schedule;
    t      timestamptz;
    x      record;
BEGIN
    SELECT * INTO v FROM queue.schedule s WHERE s.name = p_name FOR UPDATE;
    IF v.name IS NULL THEN
        RAISE EXCEPTION 'schedule "%" does not exist', p_name USING ERRCODE = 'P0002';
    END IF;
    PERFORM queue.check_range('ticks', coalesce(cardinality(p_ticks), 0), 1, 1000);
    PERFORM queue.schedule_check_ticks(p_ticks, NULL, NULL);
    FOREACH t IN ARRAY p_ticks LOOP
        -- Failures are counted as for any tick; an operator's backfill runs even if they pause it.
        PERFORM queue.schedule_count_failures(p_name);
        SELECT * INTO x FROM queue.schedule_tick(p_name, t, p_max_retention_days);
        tick := t;
        outcome := x.outcome;
        run_id := x.run_id;
        created := x.created;
        RETURN NEXT;
    END LOOP;
END $$;
