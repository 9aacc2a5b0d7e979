-- Why a run is not running now. Reads the run, its message, its inbox, its key's slots and bucket,
-- the pauses and the workers registry; locks nothing and changes nothing, so asking costs the hot
-- paths nothing.

-- One reason a run is held: its kind, plain words, and the kind's data.
CREATE OR REPLACE FUNCTION queue.blocker(p_kind text, p_text text, p_data jsonb DEFAULT '{}'::jsonb)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT jsonb_build_object('kind', p_kind, 'text', p_text) || coalesce(p_data, '{}'::jsonb);
$$;

-- Why run p_run_id of workflow p_workflow is not running now: {"runId", "status", "blockers"}, each
-- blocker {"kind", "text", ...data}; kinds workflow_paused, paused, ended, waiting, sleeping,
-- leased, retrying (a failed step waits for its next attempt), step_paused (its retries are
-- paused), concurrency, rate_limited, behind_group, no_worker (no worker seen within
-- p_worker_expiry_ms serves the run's version), no_worker_with_labels (none of those has the labels
-- the task needs), sticky (the due task waits for the worker its run sticks to). An empty list: the task is due and about to be
-- handed out. Null when the workflow has no such run.
CREATE OR REPLACE FUNCTION queue.workflow_blockers(p_workflow text, p_run_id bigint, p_worker_expiry_ms bigint DEFAULT 30000)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_queue   text := '__wf_' || p_workflow;
    v_now     timestamptz := clock_timestamp();
    r         queue.workflow_run;
    b         jsonb := '[]'::jsonb;
    v_since   timestamptz;
    v_vt      timestamptz;
    v_ct      int;
    v_head    boolean;
    v_reason  text;
    v_older   bigint;
    v_parked  boolean;
    v_in_line boolean;
    v_total   int;
    v_clock   double precision;
    v_leased  boolean;
    v_waiting boolean;
    rl        queue.rate_limit;
    v_tokens  double precision;
    v_rl      timestamptz;
    v_rl_why  text;
    v_pushed  boolean := false;
    v_limit   int;
    v_active  int;
    v_pos     int;
    v_served  int[];
    v_live    text[];
    v_unmatch jsonb;
    v_what    text;
    v_on      jsonb;
    v_route   text;
    v_needs   jsonb;
    v_sticky  text;
    sr        queue.step_retry;
    v_backoff boolean := false;
    v_failed  text;
BEGIN
    PERFORM queue.check_workflow_name(p_workflow);
    PERFORM queue.check_range('worker expiry (milliseconds)', p_worker_expiry_ms, 1, 86400000);
    SELECT * INTO r FROM queue.workflow_run wr WHERE wr.run_id = p_run_id AND wr.workflow_name = p_workflow;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF r.status <> 'running' THEN
        RETURN jsonb_build_object('runId', r.run_id, 'status', r.status::text, 'blockers', jsonb_build_array(
            queue.blocker('ended', format('the run has ended: %s', r.status),
                          jsonb_build_object('status', r.status::text))));
    END IF;

    -- Pauses: the workflow's and the run's own (group pauses do not apply to workflow queues).
    SELECT wp.paused_at INTO v_since FROM queue.workflow_pause wp WHERE wp.workflow_name = p_workflow;
    IF FOUND THEN
        b := b || queue.blocker('workflow_paused',
            format('workflow %s is paused (since %s): none of its runs is handed out until it is resumed',
                   p_workflow, queue.api_instant(v_since)),
            jsonb_build_object('since', queue.api_instant(v_since)));
    END IF;
    v_since := r.paused_at;
    IF v_since IS NOT NULL THEN
        b := b || queue.blocker('paused',
            format('the run is paused (since %s): it is not handed out until it is resumed',
                   queue.api_instant(v_since)),
            jsonb_build_object('since', queue.api_instant(v_since)));
    END IF;

    v_waiting := r.wait_step IS NOT NULL;
    IF v_waiting THEN
        SELECT coalesce(jsonb_agg(jsonb_build_object('signalId', x.signal_id, 'event', x.event,
                                                     'payload', x.payload, 'sentAt', queue.api_instant(x.sent_at))
                                  ORDER BY x.signal_id), '[]'::jsonb)
          INTO v_unmatch
          FROM (SELECT s.signal_id, s.event, s.payload, s.sent_at FROM queue.workflow_signal s
                 WHERE s.run_id = r.run_id AND s.delivered_at IS NULL
                 ORDER BY s.signal_id
                 LIMIT 20) x;
        v_on := jsonb_build_object('step', r.wait_step)
                || CASE WHEN r.wait_arms IS NULL
                        THEN jsonb_build_object('event', r.wait_event, 'match', r.wait_match)
                        ELSE jsonb_build_object('arms', r.wait_arms, 'all', coalesce(r.wait_all, false)) END;
        v_what := CASE WHEN r.wait_arms IS NULL
                       THEN format('event "%s"', r.wait_event)
                            || CASE WHEN r.wait_match IS NOT NULL AND r.wait_match <> '{}'::jsonb
                                    THEN format(' matching %s', r.wait_match) ELSE '' END
                       ELSE format('%s of %s', CASE WHEN r.wait_all THEN 'all' ELSE 'any' END,
                                   (SELECT string_agg(format('"%s"', a ->> 'event'), ', ')
                                      FROM jsonb_array_elements(r.wait_arms) a)) END;
    END IF;

    IF r.current_msg_id IS NULL THEN
        IF v_waiting THEN
            b := b || queue.blocker('waiting',
                format('it waits for %s (step "%s") since %s, with no timeout%s',
                       v_what, r.wait_step, queue.api_instant(r.wait_since),
                       CASE WHEN jsonb_array_length(v_unmatch) > 0
                            THEN format('; %s signal(s) in its inbox do not match', jsonb_array_length(v_unmatch))
                            ELSE '' END),
                v_on || jsonb_build_object('since', queue.api_instant(r.wait_since), 'until', NULL,
                                           'unmatched', v_unmatch));
        END IF;
        RETURN jsonb_build_object('runId', r.run_id, 'status', r.status::text, 'blockers', b);
    END IF;

    EXECUTE format('SELECT q.vt, q.read_ct, q.head, q.body ->> ''reason'', q.body ->> ''v'' FROM queue.%I q WHERE q.msg_id = $1',
                   'q_' || v_queue)
        INTO v_vt, v_ct, v_head, v_reason, v_route
        USING r.current_msg_id;
    IF v_vt IS NULL THEN
        RETURN jsonb_build_object('runId', r.run_id, 'status', r.status::text, 'blockers', b);
    END IF;
    v_parked := v_vt = queue.parked_vt();
    -- In its key's line for a slot: parked, or pushed back a moment to look again.
    v_in_line := r.concurrency_key IS NOT NULL
                 AND EXISTS (SELECT 1 FROM queue.concurrency_wait cw
                              WHERE cw.workflow_name = p_workflow AND cw.concurrency_key = r.concurrency_key
                                AND cw.run_id = r.run_id AND cw.msg_id = r.current_msg_id AND NOT cw.woken);

    -- The key's suspension or empty bucket: a due task of the key is pushed back until then.
    IF r.concurrency_key IS NOT NULL THEN
        SELECT * INTO rl FROM queue.rate_limit x WHERE x.concurrency_key = r.concurrency_key;
        IF FOUND THEN
            IF rl.suspended_until > v_now THEN
                v_rl := rl.suspended_until;
                v_rl_why := 'suspended (a step was told to back off)';
            ELSIF rl.max_tokens IS NOT NULL THEN
                v_tokens := least(rl.max_tokens::double precision,
                                  rl.tokens + extract(epoch FROM v_now - rl.refilled_at) * 1000 * rl.max_tokens / rl.period_ms);
                IF v_tokens < 1 THEN
                    v_rl := v_now + make_interval(secs => (1 - v_tokens) * rl.period_ms / rl.max_tokens / 1000.0);
                    v_rl_why := format('out of tokens (%s per %s ms)', rl.max_tokens, rl.period_ms);
                END IF;
            END IF;
        END IF;
        v_pushed := v_rl IS NOT NULL AND v_vt > v_now AND abs(extract(epoch FROM v_vt - v_rl)) < 0.05;
    END IF;
    v_leased := v_ct > 0 AND v_vt > v_now AND NOT v_parked AND NOT v_pushed AND NOT v_in_line;

    -- A retrying step (step_retries.sql): waiting for its backoff, not held by a worker; or paused.
    sr := queue.step_retry_current(r);
    IF sr.run_id IS NOT NULL THEN
        v_failed := format('attempt %s of step "%s" failed', sr.attempt, sr.step_name)
                    || coalesce(format(' (%s)', left(sr.error ->> 'message', 200)), '');
        v_backoff := v_leased AND v_ct <= sr.attempt;
        v_leased := v_leased AND NOT v_backoff;
        IF sr.paused_at IS NOT NULL THEN
            b := b || queue.blocker('step_paused',
                format('the retries of step "%s" are paused (since %s): %s, and no attempt starts until they are resumed',
                       sr.step_name, queue.api_instant(sr.paused_at), v_failed),
                jsonb_build_object('step', sr.step_name, 'attempt', sr.attempt, 'since', queue.api_instant(sr.paused_at),
                                   'error', sr.error));
        END IF;
    END IF;

    IF v_backoff THEN
        b := b || queue.blocker('retrying',
            format('%s; the next attempt is due at %s', v_failed, queue.api_instant(v_vt)),
            jsonb_build_object('step', sr.step_name, 'attempt', sr.attempt, 'until', queue.api_instant(v_vt),
                               'error', sr.error));
    ELSIF v_leased THEN
        SELECT array_agg(w.worker_id ORDER BY w.worker_id) INTO v_live FROM queue.worker_seen w
         WHERE w.workflow_name = p_workflow
           AND w.last_seen > v_now - make_interval(secs => p_worker_expiry_ms / 1000.0)
           AND r.workflow_version = ANY (w.versions);
        b := b || queue.blocker('leased',
            format('a worker holds its task (attempt %s) until %s: a step runs, or it backs off before its next attempt',
                   v_ct, queue.api_instant(v_vt))
            || CASE WHEN cardinality(v_live) = 1 THEN format('; the one worker of version %s is %s',
                                                           r.workflow_version, v_live[1])
                    ELSE '' END,
            jsonb_build_object('worker', CASE WHEN cardinality(v_live) = 1 THEN v_live[1] END,
                               'attempt', v_ct, 'until', queue.api_instant(v_vt)));
    ELSIF v_waiting AND v_vt > v_now AND NOT v_parked AND NOT v_pushed THEN
        b := b || queue.blocker('waiting',
            format('it waits for %s (step "%s") since %s, until %s at the latest%s',
                   v_what, r.wait_step, queue.api_instant(r.wait_since), queue.api_instant(v_vt),
                   CASE WHEN jsonb_array_length(v_unmatch) > 0
                        THEN format('; %s signal(s) in its inbox do not match', jsonb_array_length(v_unmatch))
                        ELSE '' END),
            v_on || jsonb_build_object('since', queue.api_instant(r.wait_since), 'until', queue.api_instant(v_vt),
                                       'unmatched', v_unmatch));
    ELSIF v_vt > v_now AND NOT v_parked AND v_reason = 'start' AND r.throttled_until IS NOT NULL
          AND v_vt <= r.throttled_until THEN
        b := b || queue.blocker('throttled',
            format('its start waits for its turn under the workflow''s throttle, until %s',
                   queue.api_instant(v_vt)),
            jsonb_build_object('until', queue.api_instant(v_vt)));
    ELSIF v_vt > v_now AND NOT v_parked AND NOT v_in_line
          AND NOT (v_rl IS NOT NULL AND v_vt <= v_rl + interval '50 milliseconds') THEN
        b := b || queue.blocker('sleeping',
            CASE WHEN v_reason = 'start'
                 THEN format('its start is delayed until %s', queue.api_instant(v_vt))
                 ELSE format('it sleeps until %s', queue.api_instant(v_vt)) END,
            jsonb_build_object('until', queue.api_instant(v_vt)));
    END IF;

    IF v_rl IS NOT NULL AND NOT v_leased AND NOT v_parked THEN
        b := b || queue.blocker('rate_limited',
            format('key "%s" is %s until %s', r.concurrency_key, v_rl_why, queue.api_instant(v_rl)),
            jsonb_build_object('key', r.concurrency_key, 'until', queue.api_instant(v_rl)));
    END IF;

    -- A parked task waits for a slot of its key; a due one of a full key will be parked.
    IF r.concurrency_key IS NOT NULL AND r.slot_held IS NOT TRUE AND NOT v_leased THEN
        v_limit := queue.run_concurrency_limit(p_workflow, r.concurrency_key, r.slot_limit);
        SELECT cl.total_limit, cl.fair_clock INTO v_total, v_clock
          FROM queue.concurrency_limit cl WHERE cl.workflow_name = p_workflow;
        IF v_total IS NOT NULL THEN
            -- Under a total limit: the workflow's slots, and the key's place in the round robin.
            SELECT count(*) INTO v_active FROM queue.workflow_run wr
             WHERE wr.workflow_name = p_workflow AND wr.slot_held;
            SELECT count(*) + 1 INTO v_pos FROM queue.fair_key fk
             WHERE fk.workflow_name = p_workflow AND fk.concurrency_key <> r.concurrency_key
               AND EXISTS (SELECT 1 FROM queue.concurrency_wait cw
                            WHERE cw.workflow_name = p_workflow AND cw.concurrency_key = fk.concurrency_key
                              AND NOT cw.woken)
               AND (greatest(fk.pass, v_clock), fk.concurrency_key)
                   < (coalesce((SELECT greatest(m.pass, v_clock) FROM queue.fair_key m
                                 WHERE m.workflow_name = p_workflow AND m.concurrency_key = r.concurrency_key),
                               v_clock), r.concurrency_key);
            IF v_in_line OR (v_vt <= v_now AND v_active >= v_total) THEN
                b := b || queue.blocker('concurrency',
                    format('the workflow''s %s shared slot(s) are held (%s); key "%s" is number %s in the round robin of the keys waiting for one',
                           v_total, v_active, r.concurrency_key, v_pos),
                    jsonb_build_object('key', r.concurrency_key, 'limit', v_total, 'active', v_active,
                                       'position', v_pos, 'shared', true));
            END IF;
        ELSIF v_limit IS NOT NULL THEN
            SELECT count(*) INTO v_active FROM queue.workflow_run wr
             WHERE wr.workflow_name = p_workflow AND wr.concurrency_key = r.concurrency_key AND wr.slot_held;
            SELECT count(*) + 1 INTO v_pos FROM queue.concurrency_wait cw
             WHERE cw.workflow_name = p_workflow AND cw.concurrency_key = r.concurrency_key
               AND cw.run_id < r.run_id AND NOT cw.woken;
            -- A paused run's task is parked too, with no place in the key's line.
            IF v_in_line OR (v_vt <= v_now AND v_active >= v_limit) THEN
                b := b || queue.blocker('concurrency',
                    format('key "%s" has %s of its %s slot(s) held; the run is number %s in line for one',
                           r.concurrency_key, v_active, v_limit, v_pos),
                    jsonb_build_object('key', r.concurrency_key, 'limit', v_limit, 'active', v_active,
                                       'position', v_pos));
            END IF;
        END IF;
    END IF;

    IF NOT v_head THEN
        EXECUTE format('SELECT q.msg_id FROM queue.%I q WHERE q.group_id = $1 ORDER BY q.msg_id LIMIT 1',
                       'q_' || v_queue)
            INTO v_older
            USING r.run_id::text;
        b := b || queue.blocker('behind_group',
            format('message %s of its group is older and goes first', v_older),
            jsonb_build_object('messageId', v_older));
    END IF;

    IF NOT v_leased THEN
        SELECT array_agg(DISTINCT v ORDER BY v) INTO v_served
          FROM queue.worker_seen w, unnest(w.versions) v
         WHERE w.workflow_name = p_workflow
           AND w.last_seen > v_now - make_interval(secs => p_worker_expiry_ms / 1000.0);
        IF v_served IS NULL OR NOT r.workflow_version = ANY (v_served) THEN
            b := b || queue.blocker('no_worker',
                CASE WHEN v_served IS NULL
                     THEN format('no worker of workflow %s has been seen in the last %s s',
                                 p_workflow, round(p_worker_expiry_ms / 1000.0, 1))
                     ELSE format('no worker serves version %s; the workers serve %s',
                                 r.workflow_version, array_to_string(v_served, ', ')) END,
                jsonb_build_object('version', r.workflow_version,
                                   'servedVersions', to_jsonb(coalesce(v_served, '{}'::int[]))));
        ELSE
            -- The labels the task needs: its lane's (a step's), else the workflow's required ones.
            IF v_route LIKE '%@l:%' THEN
                SELECT ln.selector INTO v_needs FROM queue.route_lane ln
                 WHERE ln.workflow_name = p_workflow AND ln.lane = substr(v_route, position('@l:' IN v_route) + 3);
            ELSE
                SELECT wr.require INTO v_needs FROM queue.worker_routing wr WHERE wr.workflow_name = p_workflow;
            END IF;
            IF v_needs IS NOT NULL AND NOT EXISTS (
                   SELECT 1 FROM queue.worker_seen w
                    WHERE w.workflow_name = p_workflow
                      AND w.last_seen > v_now - make_interval(secs => p_worker_expiry_ms / 1000.0)
                      AND r.workflow_version = ANY (w.versions) AND w.labels @> v_needs) THEN
                b := b || queue.blocker('no_worker_with_labels',
                    format('no worker of version %s with labels %s has been seen in the last %s s',
                           r.workflow_version, queue.lane_of(v_needs), round(p_worker_expiry_ms / 1000.0, 1)),
                    jsonb_build_object('version', r.workflow_version, 'labels', v_needs));
            END IF;
            IF v_route LIKE '%@w:%' AND v_vt <= v_now THEN
                v_sticky := substr(v_route, position('@w:' IN v_route) + 3);
                b := b || queue.blocker('sticky',
                    format('the run sticks to worker %s, which takes its tasks while the registry lists it',
                           v_sticky),
                    jsonb_build_object('worker', v_sticky));
            END IF;
        END IF;
    END IF;
    RETURN jsonb_build_object('runId', r.run_id, 'status', r.status::text, 'blockers', b);
END $$;
