-- Throttles (schema V019__fleet_control.sql): the starts of a workflow beyond a rate are queued,
-- not refused. A start's first task is made due at the time the generic cell rate algorithm gives
-- it: with emission interval T = period / limit and tolerance (burst - 1) * T, a start due at t is
-- admitted at the later of t and the throttle's theoretical arrival time (TAT) less the
-- tolerance, and moves the TAT to the later of it and t, plus T. Starts are admitted in the order
-- they are made; nothing waits on a lock longer than one start's update of the throttle's row.

-- Whether a workflow has a throttle: its starts then take workflow_start's general path.
CREATE OR REPLACE FUNCTION queue.workflow_throttled(p_name text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $$
    SELECT EXISTS (SELECT 1 FROM queue.throttle t WHERE t.workflow_name = p_name);
$$;

-- The time a start of p_name (key p_key, null: none) due at p_due is admitted under the
-- workflow's throttle, moving the throttle's TAT on; p_due when the workflow has none.
CREATE OR REPLACE FUNCTION queue.throttle_admit(p_name text, p_key text, p_due timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    t       queue.throttle;
    v_every interval;
    v_slack interval;
    v_tat   timestamptz;
BEGIN
    SELECT * INTO t FROM queue.throttle th WHERE th.workflow_name = p_name;
    IF NOT FOUND THEN
        RETURN p_due;
    END IF;
    v_every := make_interval(secs => t.period_ms / 1000.0 / t.max_starts);
    v_slack := v_every * (t.burst - 1);
    INSERT INTO queue.throttle_state AS s (workflow_name, throttle_key, tat)
    VALUES (p_name, CASE WHEN t.per_key THEN coalesce(p_key, '') ELSE '' END, p_due + v_every)
    ON CONFLICT (workflow_name, throttle_key) DO UPDATE SET tat = greatest(s.tat, p_due) + v_every
    RETURNING s.tat INTO v_tat;
    -- The TAT before this start is v_tat - v_every.
    RETURN greatest(p_due, v_tat - v_every - v_slack);
END $$;

-- Sets (p_limit starts per p_period_ms, p_burst of them at once, for the whole workflow or per
-- key) or removes (p_limit null) a workflow's throttle; returns it (null fields when removed).
-- Starts already queued keep their time; a new throttle starts afresh.
CREATE OR REPLACE FUNCTION queue.set_throttle(p_name text, p_limit integer, p_period_ms bigint, p_burst integer DEFAULT 1, p_per_key boolean DEFAULT false)
 RETURNS queue.throttle
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    t queue.throttle;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    IF p_limit IS NULL THEN
        IF p_period_ms IS NOT NULL OR p_burst IS DISTINCT FROM 1 OR p_per_key THEN
            RAISE EXCEPTION 'limit is required with periodMs, burst or perKey (a null limit removes the throttle)'
                USING ERRCODE = '22023';
        END IF;
        DELETE FROM queue.throttle th WHERE th.workflow_name = p_name;
        DELETE FROM queue.throttle_state s WHERE s.workflow_name = p_name;
        RETURN t;
    END IF;
    PERFORM queue.check_range('limit', p_limit, 1, 1000000);
    IF p_period_ms IS NULL THEN
        RAISE EXCEPTION 'periodMs is required with limit' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_range('periodMs', p_period_ms, 1, 86400000);
    PERFORM queue.check_range('burst', coalesce(p_burst, 1), 1, 1000000);
    INSERT INTO queue.throttle AS th (workflow_name, max_starts, period_ms, burst, per_key)
    VALUES (p_name, p_limit, p_period_ms, coalesce(p_burst, 1), coalesce(p_per_key, false))
    ON CONFLICT (workflow_name) DO UPDATE
        SET max_starts = EXCLUDED.max_starts, period_ms = EXCLUDED.period_ms, burst = EXCLUDED.burst,
            per_key = EXCLUDED.per_key, updated_at = now()
    RETURNING * INTO t;
    DELETE FROM queue.throttle_state s WHERE s.workflow_name = p_name;
    RETURN t;
END $$;

-- A workflow's throttle (no row when it has none).
CREATE OR REPLACE FUNCTION queue.throttle_of(p_name text)
 RETURNS SETOF queue.throttle
 LANGUAGE sql
 STABLE
AS $$
    SELECT * FROM queue.throttle WHERE workflow_name = p_name;
$$;
