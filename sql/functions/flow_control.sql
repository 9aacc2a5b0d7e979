-- Flow control (schema V006__flow_control.sql): concurrency limits per workflow and key, token
-- buckets and suspensions per key, and priorities. A run without a key pays a column check at
-- hand-out (workflow_poll) and in the release trigger's condition, nothing more.
--
-- A run of a limited key holds a slot (slot_held) from the hand-out that admits it until its
-- current message changes (it sleeps or waits) or it ends; the trigger below frees the slot and
-- wakes the oldest waiting run of the key. A run that finds no free slot at hand-out is parked:
-- its message gets vt 9999-12-31 (parked_vt: not due, never handed out, yet a finite time that
-- receipts and timers can read) and a row in concurrency_wait.
--
-- Locks: an admission (flow_admit) runs with the run's row locked, takes the key's rate_limit row,
-- then the key's advisory lock; keys in (workflow, key) order within one poll. A release never
-- waits for a lock: it runs in the trigger of whichever run update ends or suspends a run, in no
-- particular order, so it takes waiting rows and their messages with SKIP LOCKED only. A release
-- an admission cannot see yet wakes some other waiting run, so a slot is not lost; the cases
-- where it might be (see flow_admit) park for a moment only.

-- The visibility time of a parked message: later than any real due time.
CREATE OR REPLACE FUNCTION queue.parked_vt()
 RETURNS timestamp with time zone
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT timestamptz '9999-12-31 00:00:00+00';
$$;

-- Raises 22023 unless the key is a valid key: 1 to 255 characters.
CREATE OR REPLACE FUNCTION queue.check_flow_key(p_key text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF p_key IS NULL OR p_key = '' OR length(p_key) > 255 THEN
        RAISE EXCEPTION 'concurrencyKey must be 1 to 255 characters' USING ERRCODE = '22023';
    END IF;
END $$;

-- Whether a start item asks for flow control (a concurrencyKey or a priority): such starts take the
-- general start path, which gives the run its key and priority (flow_start).
CREATE OR REPLACE FUNCTION queue.flow_fields(p_item jsonb)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT p_item ->> 'concurrencyKey' IS NOT NULL OR p_item ->> 'priority' IS NOT NULL;
$$;

-- How much earlier than its due time a task of this priority is handed out: a minute per level.
CREATE OR REPLACE FUNCTION queue.priority_lead(p_priority smallint)
 RETURNS interval
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT make_interval(mins => coalesce(p_priority, 0));
$$;

-- A start item's concurrencyKey (null: none); raises 22023 unless it is a string of 1 to 255
-- characters.
CREATE OR REPLACE FUNCTION queue.flow_key_of(p_item jsonb)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF jsonb_typeof(coalesce(p_item -> 'concurrencyKey', 'null')) NOT IN ('string', 'null') THEN
        RAISE EXCEPTION 'concurrencyKey must be a string' USING ERRCODE = '22023';
    END IF;
    IF p_item ->> 'concurrencyKey' IS NOT NULL THEN
        PERFORM queue.check_flow_key(p_item ->> 'concurrencyKey');
    END IF;
    RETURN p_item ->> 'concurrencyKey';
END $$;

-- Gives a run just started by a batch item its key, priority and the limit its input gave its key
-- (p_slot_limit, see flow_strategy); a priority moves its first task, when due now, ahead by
-- priority_lead.
DROP FUNCTION IF EXISTS queue.flow_start(bigint, jsonb);
CREATE OR REPLACE FUNCTION queue.flow_start(p_run_id bigint, p_item jsonb, p_slot_limit integer DEFAULT NULL::integer)
 RETURNS void
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_key      text := queue.flow_key_of(p_item);
    v_priority smallint;
    r          queue.workflow_run;
BEGIN
    IF jsonb_typeof(coalesce(p_item -> 'priority', 'null')) NOT IN ('number', 'null') THEN
        RAISE EXCEPTION 'priority must be a number' USING ERRCODE = '22023';
    END IF;
    IF p_item ->> 'priority' IS NOT NULL THEN
        PERFORM queue.check_range('priority', (p_item ->> 'priority')::numeric::bigint, 0, 9);
        v_priority := nullif((p_item ->> 'priority')::numeric::smallint, 0);
    END IF;
    IF v_key IS NULL AND v_priority IS NULL THEN
        RETURN;
    END IF;
    UPDATE queue.workflow_run wr
       SET concurrency_key = v_key, priority = v_priority, slot_limit = p_slot_limit
     WHERE wr.run_id = p_run_id
    RETURNING * INTO r;
    IF v_priority IS NOT NULL AND r.current_msg_id IS NOT NULL THEN
        EXECUTE format('UPDATE queue.%I SET vt = vt - $2 WHERE msg_id = $1 AND vt <= clock_timestamp()',
                       'q___wf_' || r.workflow_name)
            USING r.current_msg_id, queue.priority_lead(v_priority);
    END IF;
END $$;

-- The limit a run's input gives its key under its workflow's limitFrom (null: the limit has no
-- limitFrom): the value at the path, through limits when set (a value limits does not name takes
-- the workflow's limit), else the value itself, a whole number from 1 to 100000. Raises 22023
-- naming the path when the input has no value there or the value is no limit.
CREATE OR REPLACE FUNCTION queue.flow_input_limit(cl queue.concurrency_limit, p_input jsonb)
 RETURNS integer
 LANGUAGE plpgsql
 STABLE
AS $$
DECLARE
    v jsonb;
BEGIN
    IF cl.limit_from IS NULL THEN
        RETURN NULL;
    END IF;
    v := jsonb_path_query_first(coalesce(p_input, 'null'::jsonb), cl.limit_from::jsonpath);
    IF v IS NULL OR v = 'null'::jsonb THEN
        RAISE EXCEPTION 'input has no value at % (the path limitFrom of workflow "%"''s concurrency limit reads)',
            cl.limit_from, cl.workflow_name USING ERRCODE = '22023';
    END IF;
    IF cl.limits IS NOT NULL THEN
        RETURN coalesce((cl.limits ->> (v #>> '{}'))::int, cl.max_active);
    END IF;
    IF NOT queue.whole_number_between(v, 1, 100000) THEN
        RAISE EXCEPTION 'input at % must be a whole number from 1 to 100000 (the run''s concurrency limit, limitFrom), got %',
            cl.limit_from, v USING ERRCODE = '22023';
    END IF;
    RETURN v::text::int;
END $$;

-- What the concurrency limit of a start's workflow makes of a start of key p_key with input
-- p_input, before its run is made (workflow_start): the limit's strategy, the limit the input
-- gives the key (limitFrom, else null), whether the key's running runs (sleeping and waiting ones
-- too) are at the limit in force, and the key's newest running run. No row when the workflow has
-- no limit. A strategy other than queue takes the key's start lock first, so that racing starts of
-- one key count each other.
CREATE OR REPLACE FUNCTION queue.flow_strategy(p_name text, p_key text, p_input jsonb)
 RETURNS TABLE(strategy text, slot_limit integer, key_full boolean, newest bigint)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    cl      queue.concurrency_limit;
    v_limit int;
    v_count int;
BEGIN
    SELECT * INTO cl FROM queue.concurrency_limit l WHERE l.workflow_name = p_name;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    slot_limit := queue.flow_input_limit(cl, p_input);
    strategy := cl.strategy;
    IF cl.strategy <> 'queue' THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('start' || chr(1) || p_name || chr(1) || p_key, 11));
    END IF;
    v_limit := queue.run_concurrency_limit(p_name, p_key, slot_limit);
    SELECT count(*), max(x.run_id) INTO v_count, newest
      FROM (SELECT wr.run_id FROM queue.workflow_run wr
             WHERE wr.workflow_name = p_name AND wr.concurrency_key = p_key AND wr.status = 'running'
             ORDER BY wr.run_id DESC
             LIMIT v_limit) x;
    key_full := v_count >= v_limit;
    RETURN NEXT;
END $$;

-- Carries out a strategy for run p_run_id just made by a start of key p_key (flow_strategy's
-- strategy and key_full): cancel_in_progress cancels the oldest of the key's other running runs,
-- as many as keep the new run within the limit; cancel_newest cancels the new run when the key was
-- full. Answers what happened to the run (started, queued or cancelled) and the runs cancelled.
CREATE OR REPLACE FUNCTION queue.flow_apply_strategy(p_run_id bigint, p_name text, p_key text, p_strategy text, p_key_full boolean, p_slot_limit integer)
 RETURNS TABLE(admission text, cancelled_runs bigint[])
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_limit int;
    c       bigint;
BEGIN
    IF p_strategy = 'cancel_in_progress' THEN
        v_limit := queue.run_concurrency_limit(p_name, p_key, p_slot_limit);
        cancelled_runs := '{}';
        FOR c IN SELECT wr.run_id FROM queue.workflow_run wr
                  WHERE wr.workflow_name = p_name AND wr.concurrency_key = p_key AND wr.status = 'running'
                    AND wr.run_id <> p_run_id
                  ORDER BY wr.run_id DESC
                 OFFSET v_limit - 1 LOOP
            IF (SELECT x.cancelled FROM queue.workflow_cancel(c) x) THEN
                cancelled_runs := cancelled_runs || c;
            END IF;
        END LOOP;
        cancelled_runs := (SELECT array_agg(u ORDER BY u) FROM unnest(cancelled_runs) u);
        admission := 'started';
    ELSIF p_strategy = 'cancel_newest' AND p_key_full THEN
        PERFORM * FROM queue.workflow_cancel(p_run_id);
        admission := 'cancelled';
    ELSE
        admission := CASE WHEN p_key_full THEN 'queued' ELSE 'started' END;
    END IF;
    RETURN NEXT;
END $$;

-- Wakes one waiting run (w, its row locked by the caller): makes its parked message due and marks
-- it woken (a slot is kept for it). 'gone' when the run moved on (its row is dropped), 'held' when
-- another transaction holds its message (that hand-out decides for it), else 'woken'.
CREATE OR REPLACE FUNCTION queue.flow_wake_row(w queue.concurrency_wait)
 RETURNS text
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_lead interval;
    v_msg  bigint;
BEGIN
    SELECT queue.priority_lead(wr.priority) INTO v_lead FROM queue.workflow_run wr
     WHERE wr.run_id = w.run_id AND wr.status = 'running' AND wr.current_msg_id = w.msg_id;
    IF NOT FOUND THEN
        DELETE FROM queue.concurrency_wait cw
         WHERE cw.workflow_name = w.workflow_name AND cw.concurrency_key = w.concurrency_key
           AND cw.run_id = w.run_id;
        RETURN 'gone';
    END IF;
    -- A message someone holds is being handed out right now: that admission decides for its run,
    -- and the next waiting run is woken instead. Only a parked message is made due: any other
    -- comes due by itself (a look again, a suspension), or is one this transaction has received
    -- to hand out (an admission waking its own run, or another run of the same poll), whose lease
    -- and receipt must stand.
    EXECUTE format('UPDATE queue.%1$I SET vt = CASE WHEN vt = queue.parked_vt()'
                   ' THEN clock_timestamp() - $2 ELSE vt END'
                   ' WHERE msg_id = (SELECT msg_id FROM queue.%1$I WHERE msg_id = $1 FOR UPDATE SKIP LOCKED)'
                   ' RETURNING msg_id', 'q___wf_' || w.workflow_name)
        USING w.msg_id, v_lead INTO v_msg;
    IF v_msg IS NULL THEN
        RETURN 'held';
    END IF;
    UPDATE queue.concurrency_wait cw SET woken = true
     WHERE cw.workflow_name = w.workflow_name AND cw.concurrency_key = w.concurrency_key
       AND cw.run_id = w.run_id;
    RETURN 'woken';
END $$;

-- Wakes up to p_n of the oldest waiting runs of a workflow's key (a slot is kept for each), making
-- their parked messages due; skips waiting rows and messages other transactions hold and drops
-- rows of runs that moved on; returns how many.
CREATE OR REPLACE FUNCTION queue.flow_wake(p_name text, p_key text, p_n integer)
 RETURNS integer
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    w         queue.concurrency_wait;
    v_done    int := 0;
    v_skipped bigint[] := '{}';
    v_outcome text;
BEGIN
    -- One row at a time: a cursor would lock the rows it fetches ahead.
    WHILE v_done < p_n LOOP
        SELECT * INTO w FROM queue.concurrency_wait cw
         WHERE cw.workflow_name = p_name AND cw.concurrency_key = p_key AND NOT cw.woken
           AND cw.run_id <> ALL (v_skipped)
         ORDER BY cw.run_id
         LIMIT 1
         FOR UPDATE SKIP LOCKED;
        EXIT WHEN NOT FOUND;
        v_outcome := queue.flow_wake_row(w);
        IF v_outcome = 'held' THEN
            v_skipped := v_skipped || w.run_id;
        ELSIF v_outcome = 'woken' THEN
            v_done := v_done + 1;
        END IF;
    END LOOP;
    IF v_done > 0 THEN
        PERFORM queue.notify_once('__wf_' || p_name);
    END IF;
    RETURN v_done;
END $$;

-- A key's weight in its workflow's round robin (weights: key to weight; 1 when it names none).
CREATE OR REPLACE FUNCTION queue.fair_weight(p_weights jsonb, p_key text)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE
AS $$
    SELECT coalesce((p_weights ->> p_key)::int, 1);
$$;

-- Wakes up to p_n waiting runs of a workflow with a total limit (a slot is kept for each), by its
-- round robin (start-time fair queuing): the next is the oldest waiting run of the key whose next
-- admission starts first in virtual time (the greater of its pass and the workflow's clock; ties
-- by key), among keys whose own limit has room. As each admission moves its key's pass on by
-- 1 / its weight, a key of weight 3 is admitted three times for each time one of weight 1 is. A
-- run woken and not yet admitted has taken its key's turn already: each moves the key's start on
-- by 1 / its weight too, so several slots freed together (or in quick succession) go by the round,
-- not all to the key that was next. Skips what other transactions hold; returns how many.
CREATE OR REPLACE FUNCTION queue.flow_wake_fair(p_name text, p_n integer)
 RETURNS integer
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_clock   double precision;
    v_weights jsonb;
    v_key     text;
    v_full    text[] := '{}';
    v_skipped bigint[] := '{}';
    w         queue.concurrency_wait;
    v_limit   int;
    v_held    int;
    v_outcome text;
    v_done    int := 0;
BEGIN
    SELECT cl.fair_clock, cl.weights INTO v_clock, v_weights
      FROM queue.concurrency_limit cl WHERE cl.workflow_name = p_name;
    WHILE v_done < p_n LOOP
        SELECT fk.concurrency_key INTO v_key FROM queue.fair_key fk
         WHERE fk.workflow_name = p_name AND fk.concurrency_key <> ALL (v_full)
           AND EXISTS (SELECT 1 FROM queue.concurrency_wait cw
                        WHERE cw.workflow_name = p_name AND cw.concurrency_key = fk.concurrency_key
                          AND NOT cw.woken AND cw.run_id <> ALL (v_skipped))
         ORDER BY greatest(fk.pass, v_clock)
                  + (SELECT count(*) FROM queue.concurrency_wait cw
                      WHERE cw.workflow_name = p_name AND cw.concurrency_key = fk.concurrency_key AND cw.woken)
                    / queue.fair_weight(v_weights, fk.concurrency_key)::double precision,
                  fk.concurrency_key
         LIMIT 1;
        EXIT WHEN NOT FOUND;
        SELECT * INTO w FROM queue.concurrency_wait cw
         WHERE cw.workflow_name = p_name AND cw.concurrency_key = v_key AND NOT cw.woken
           AND cw.run_id <> ALL (v_skipped)
         ORDER BY cw.run_id
         LIMIT 1
         FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            v_full := v_full || v_key;
            CONTINUE;
        END IF;
        -- The key's own limit holds under the total one.
        v_limit := queue.run_concurrency_limit(p_name, v_key,
                                               (SELECT wr.slot_limit FROM queue.workflow_run wr WHERE wr.run_id = w.run_id));
        SELECT count(*) INTO v_held
          FROM (SELECT 1 FROM queue.workflow_run wr
                 WHERE wr.workflow_name = p_name AND wr.concurrency_key = v_key AND wr.slot_held
                 LIMIT v_limit) x;
        v_held := v_held + (SELECT count(*) FROM queue.concurrency_wait cw
                             WHERE cw.workflow_name = p_name AND cw.concurrency_key = v_key AND cw.woken);
        IF v_held >= v_limit THEN
            v_full := v_full || v_key;
            CONTINUE;
        END IF;
        v_outcome := queue.flow_wake_row(w);
        IF v_outcome = 'held' THEN
            v_skipped := v_skipped || w.run_id;
        ELSIF v_outcome = 'woken' THEN
            v_done := v_done + 1;
        END IF;
    END LOOP;
    -- Keys caught up with the clock and with nobody waiting need no row: a new one starts there.
    DELETE FROM queue.fair_key fk
     WHERE fk.ctid IN (SELECT k.ctid FROM queue.fair_key k
                        WHERE k.workflow_name = p_name AND k.pass <= v_clock
                          AND NOT EXISTS (SELECT 1 FROM queue.concurrency_wait cw
                                           WHERE cw.workflow_name = p_name
                                             AND cw.concurrency_key = k.concurrency_key)
                        LIMIT 10
                          FOR UPDATE SKIP LOCKED);
    IF v_done > 0 THEN
        PERFORM queue.notify_once('__wf_' || p_name);
    END IF;
    RETURN v_done;
END $$;

-- A slot of a workflow's key was freed (a run ended, slept or waited, or a run woken for a slot
-- will not take it): wakes the next run for it, by the workflow's round robin when it has a total
-- limit, else the key's oldest waiting run.
CREATE OR REPLACE FUNCTION queue.flow_freed(p_name text, p_key text)
 RETURNS void
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM queue.concurrency_limit cl
                WHERE cl.workflow_name = p_name AND cl.total_limit IS NOT NULL) THEN
        PERFORM queue.flow_wake_fair(p_name, 1);
    ELSE
        PERFORM queue.flow_wake(p_name, p_key, 1);
    END IF;
END $$;

-- Trigger function (trigger workflow_run_slot_release on workflow_run, below): a keyed run that
-- ends or whose current message changes (a sleep, a wait) frees its slot and wakes the next
-- parked run for it (flow_freed); an ended run leaves the waiting list.
CREATE OR REPLACE FUNCTION queue.flow_release()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_woken boolean;
BEGIN
    IF OLD.slot_held THEN
        NEW.slot_held := NULL;
        PERFORM queue.flow_freed(OLD.workflow_name, OLD.concurrency_key);
    END IF;
    IF NEW.status <> 'running' THEN
        DELETE FROM queue.concurrency_wait cw
         WHERE cw.workflow_name = OLD.workflow_name AND cw.concurrency_key = OLD.concurrency_key
           AND cw.run_id = OLD.run_id
        RETURNING cw.woken INTO v_woken;
        -- A run woken for a freed slot that ends before taking it passes the slot on.
        IF v_woken THEN
            PERFORM queue.flow_freed(OLD.workflow_name, OLD.concurrency_key);
        END IF;
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER workflow_run_slot_release
    BEFORE UPDATE OF status, current_msg_id ON queue.workflow_run
    FOR EACH ROW
    WHEN (OLD.concurrency_key IS NOT NULL
          AND (NEW.status <> 'running' OR NEW.current_msg_id IS DISTINCT FROM OLD.current_msg_id))
    EXECUTE FUNCTION queue.flow_release();

-- Whether a keyed run's due task (p_msg_id, received by this transaction, the run's row locked)
-- may be handed out now. Not when its key is suspended or its bucket is empty: the task is pushed
-- to when it may go. Not when its workflow's limit is reached or an older run of the key waits:
-- the task is parked until a slot frees. Neither counts as a delivery.
CREATE OR REPLACE FUNCTION queue.flow_admit(p_queue text, r queue.workflow_run, p_msg_id bigint)
 RETURNS boolean
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_tbl    text := 'q_' || p_queue;
    v_now    timestamptz := clock_timestamp();
    b        queue.rate_limit;
    v_tokens double precision;
    v_token  boolean := false;
    v_limit  int;
    v_active int;
    v_free   int;
    v_older  boolean;
    v_until  timestamptz;
    v_woken  boolean;
    v_lonely boolean;
    v_mine   boolean;
    v_kept   int;
    v_total  int;
    w        queue.concurrency_wait;
BEGIN
    SELECT * INTO b FROM queue.rate_limit rl WHERE rl.concurrency_key = r.concurrency_key FOR UPDATE;
    IF FOUND THEN
        IF b.suspended_until > v_now THEN
            v_until := b.suspended_until;
        ELSIF b.max_tokens IS NOT NULL THEN
            v_tokens := least(b.max_tokens::double precision,
                              b.tokens + extract(epoch FROM v_now - b.refilled_at) * 1000 * b.max_tokens / b.period_ms);
            IF v_tokens < 1 THEN
                v_until := v_now + make_interval(secs => (1 - v_tokens) * b.period_ms / b.max_tokens / 1000.0);
            ELSE
                v_tokens := v_tokens - 1;
                v_token := true;
            END IF;
            UPDATE queue.rate_limit rl SET tokens = v_tokens, refilled_at = v_now
             WHERE rl.concurrency_key = r.concurrency_key;
        END IF;
        IF v_until IS NOT NULL THEN
            EXECUTE format('UPDATE queue.%I SET vt = $2, read_ct = greatest(read_ct - 1, 0) WHERE msg_id = $1', v_tbl)
                USING p_msg_id, v_until;
            RETURN false;
        END IF;
    END IF;
    IF r.slot_held THEN
        RETURN true;
    END IF;
    -- The key's own limit when it has one, else the one the run's input gave it, else its
    -- workflow's.
    v_limit := queue.run_concurrency_limit(r.workflow_name, r.concurrency_key, r.slot_limit);
    IF v_limit IS NULL THEN
        RETURN true;
    END IF;
    -- A total limit over the workflow's keys admits by its round robin instead.
    SELECT cl.total_limit INTO v_total FROM queue.concurrency_limit cl WHERE cl.workflow_name = r.workflow_name;
    IF v_total IS NOT NULL THEN
        IF queue.flow_admit_fair(p_queue, r, p_msg_id, v_total, v_limit) THEN
            RETURN true;
        END IF;
        IF v_token THEN
            UPDATE queue.rate_limit rl SET tokens = least(rl.tokens + 1, rl.max_tokens)
             WHERE rl.concurrency_key = r.concurrency_key;
        END IF;
        RETURN false;
    END IF;

    PERFORM pg_advisory_xact_lock(hashtextextended('slot' || chr(1) || r.workflow_name || chr(1) || r.concurrency_key, 11));
    SELECT count(*) INTO v_active
      FROM (SELECT 1 FROM queue.workflow_run wr
             WHERE wr.workflow_name = r.workflow_name AND wr.concurrency_key = r.concurrency_key AND wr.slot_held
             LIMIT v_limit) x;
    -- A woken run has a freed slot kept for it. Any other run takes a slot only when one is free
    -- beyond those kept for woken runs and no older run of the key waits to be woken (rows of runs
    -- that moved on are dropped on the way).
    SELECT cw.woken INTO v_mine FROM queue.concurrency_wait cw
     WHERE cw.workflow_name = r.workflow_name AND cw.concurrency_key = r.concurrency_key
       AND cw.run_id = r.run_id;
    v_older := false;
    v_kept := 0;
    IF v_mine IS NOT TRUE THEN
        SELECT count(*) INTO v_kept FROM queue.concurrency_wait cw
         WHERE cw.workflow_name = r.workflow_name AND cw.concurrency_key = r.concurrency_key AND cw.woken;
        LOOP
            SELECT * INTO w FROM queue.concurrency_wait cw
             WHERE cw.workflow_name = r.workflow_name AND cw.concurrency_key = r.concurrency_key
               AND cw.run_id < r.run_id AND NOT cw.woken
             ORDER BY cw.run_id
             LIMIT 1;
            v_older := FOUND;
            EXIT WHEN NOT v_older OR EXISTS (SELECT 1 FROM queue.workflow_run o
                                              WHERE o.run_id = w.run_id AND o.status = 'running'
                                                AND o.current_msg_id = w.msg_id);
            DELETE FROM queue.concurrency_wait cw
             WHERE cw.workflow_name = w.workflow_name AND cw.concurrency_key = w.concurrency_key
               AND cw.run_id = w.run_id;
        END LOOP;
        -- Slots free beyond those kept: the oldest waiting runs are woken for them (this one, too,
        -- when it is among them).
        IF v_active + v_kept < v_limit AND v_older THEN
            PERFORM queue.flow_wake(r.workflow_name, r.concurrency_key, v_limit - v_active - v_kept);
            SELECT cw.woken INTO v_mine FROM queue.concurrency_wait cw
             WHERE cw.workflow_name = r.workflow_name AND cw.concurrency_key = r.concurrency_key
               AND cw.run_id = r.run_id;
        END IF;
    END IF;
    IF v_active < v_limit AND (v_mine IS TRUE OR (v_active + v_kept < v_limit AND NOT v_older)) THEN
        UPDATE queue.workflow_run wr SET slot_held = true WHERE wr.run_id = r.run_id;
        DELETE FROM queue.concurrency_wait cw
         WHERE cw.workflow_name = r.workflow_name AND cw.concurrency_key = r.concurrency_key
           AND cw.run_id = r.run_id;
        RETURN true;
    END IF;

    IF v_token THEN
        UPDATE queue.rate_limit rl SET tokens = least(rl.tokens + 1, rl.max_tokens)
         WHERE rl.concurrency_key = r.concurrency_key;
    END IF;
    IF v_active < v_limit THEN
        -- The slots free are kept for woken runs; a woken run whose message a hand-out holding it
        -- parked again is made due.
        EXECUTE format('UPDATE queue.%1$I SET vt = clock_timestamp()'
                       ' WHERE msg_id IN (SELECT cw.msg_id FROM queue.concurrency_wait cw'
                       '                   WHERE cw.workflow_name = $1 AND cw.concurrency_key = $2 AND cw.woken)'
                       '   AND vt = queue.parked_vt()', v_tbl)
            USING r.workflow_name, r.concurrency_key;
    END IF;
    -- A release may be about to commit unseen by this transaction, and its wake-up go to an
    -- earlier waiting run. Parked for good unless this run was being woken right now, or no
    -- other run of the key waits to be woken and a holder's row is locked (a release that found
    -- nobody to wake): then it looks again in a moment.
    SELECT cw.woken INTO v_woken FROM queue.concurrency_wait cw
     WHERE cw.workflow_name = r.workflow_name AND cw.concurrency_key = r.concurrency_key
       AND cw.run_id = r.run_id
       FOR UPDATE;
    IF v_active >= v_limit AND v_woken IS NOT TRUE THEN
        v_lonely := NOT EXISTS (SELECT 1 FROM queue.concurrency_wait cw
                                 WHERE cw.workflow_name = r.workflow_name
                                   AND cw.concurrency_key = r.concurrency_key
                                   AND cw.run_id <> r.run_id AND NOT cw.woken);
        IF v_lonely THEN
            SELECT count(*) INTO v_free
              FROM (SELECT 1 FROM queue.workflow_run wr
                     WHERE wr.workflow_name = r.workflow_name AND wr.concurrency_key = r.concurrency_key
                       AND wr.slot_held
                     FOR SHARE SKIP LOCKED) x;
        END IF;
    END IF;
    v_until := CASE WHEN v_active >= v_limit AND v_woken IS NOT TRUE AND (NOT v_lonely OR v_free >= v_active)
                    THEN queue.parked_vt()
                    ELSE v_now + interval '250 milliseconds' END;
    EXECUTE format('UPDATE queue.%I SET vt = $2, read_ct = greatest(read_ct - 1, 0) WHERE msg_id = $1', v_tbl)
        USING p_msg_id, v_until;
    INSERT INTO queue.concurrency_wait AS cw (workflow_name, concurrency_key, run_id, msg_id)
    VALUES (r.workflow_name, r.concurrency_key, r.run_id, p_msg_id)
    ON CONFLICT (workflow_name, concurrency_key, run_id)
    DO UPDATE SET msg_id = EXCLUDED.msg_id, woken = false;
    RETURN false;
END $$;

-- Admission under a workflow's total limit (p_total; p_key_limit the limit of the run's key), with
-- the workflow's round-robin lock held: a run woken for a slot takes the slot kept for it; any
-- other takes one when the total and its key have room beyond the slots kept for woken runs and no
-- run waits to be woken (free slots wake waiting runs first, by the round robin, this one too
-- when it waits). An admission moves its key's pass on by 1 / its weight from the later of its
-- pass and the workflow's clock, which it moves to that start. A run that finds no room is parked
-- (vt parked_vt) in concurrency_wait, its key given a place in the round robin; it looks again in
-- 250 ms instead when a holder's row is locked (a release that may be freeing a slot unseen).
CREATE OR REPLACE FUNCTION queue.flow_admit_fair(p_queue text, r queue.workflow_run, p_msg_id bigint, p_total integer, p_key_limit integer)
 RETURNS boolean
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_active     int;
    v_key_active int;
    v_kept       int;
    v_key_kept   int;
    v_mine       boolean;
    v_waiting    boolean;
    v_free       int;
    v_clock      double precision;
    v_weight     int;
    v_start      double precision;
    v_until      timestamptz;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('fair' || chr(1) || r.workflow_name, 11));
    SELECT count(*) INTO v_active
      FROM (SELECT 1 FROM queue.workflow_run wr WHERE wr.workflow_name = r.workflow_name AND wr.slot_held
             LIMIT p_total) x;
    SELECT count(*), count(*) FILTER (WHERE cw.concurrency_key = r.concurrency_key) INTO v_kept, v_key_kept
      FROM queue.concurrency_wait cw WHERE cw.workflow_name = r.workflow_name AND cw.woken;
    SELECT count(*) INTO v_key_active
      FROM (SELECT 1 FROM queue.workflow_run wr
             WHERE wr.workflow_name = r.workflow_name AND wr.concurrency_key = r.concurrency_key AND wr.slot_held
             LIMIT p_key_limit) x;
    SELECT cw.woken INTO v_mine FROM queue.concurrency_wait cw
     WHERE cw.workflow_name = r.workflow_name AND cw.concurrency_key = r.concurrency_key
       AND cw.run_id = r.run_id;
    IF v_mine IS NOT TRUE THEN
        v_waiting := EXISTS (SELECT 1 FROM queue.concurrency_wait cw
                              WHERE cw.workflow_name = r.workflow_name AND NOT cw.woken AND cw.run_id <> r.run_id);
        v_free := p_total - v_active - v_kept;
        IF v_free > 0 AND (v_waiting OR v_mine IS NOT NULL) THEN
            PERFORM queue.flow_wake_fair(r.workflow_name, v_free);
            SELECT cw.woken INTO v_mine FROM queue.concurrency_wait cw
             WHERE cw.workflow_name = r.workflow_name AND cw.concurrency_key = r.concurrency_key
               AND cw.run_id = r.run_id;
            -- Whoever waits and could be woken now was: what room is left is this run's.
            SELECT count(*), count(*) FILTER (WHERE cw.concurrency_key = r.concurrency_key)
              INTO v_kept, v_key_kept
              FROM queue.concurrency_wait cw WHERE cw.workflow_name = r.workflow_name AND cw.woken;
        END IF;
    END IF;
    IF v_mine IS TRUE
       OR (v_active + v_kept < p_total AND v_key_active + v_key_kept < p_key_limit AND v_mine IS NULL) THEN
        UPDATE queue.workflow_run wr SET slot_held = true WHERE wr.run_id = r.run_id;
        DELETE FROM queue.concurrency_wait cw
         WHERE cw.workflow_name = r.workflow_name AND cw.concurrency_key = r.concurrency_key
           AND cw.run_id = r.run_id;
        SELECT cl.fair_clock, queue.fair_weight(cl.weights, r.concurrency_key) INTO v_clock, v_weight
          FROM queue.concurrency_limit cl WHERE cl.workflow_name = r.workflow_name;
        INSERT INTO queue.fair_key AS fk (workflow_name, concurrency_key, pass)
        VALUES (r.workflow_name, r.concurrency_key, v_clock + 1.0 / v_weight)
        ON CONFLICT (workflow_name, concurrency_key)
        DO UPDATE SET pass = greatest(fk.pass, v_clock) + 1.0 / v_weight
        RETURNING fk.pass - 1.0 / v_weight INTO v_start;
        IF v_start > v_clock THEN
            UPDATE queue.concurrency_limit cl SET fair_clock = v_start WHERE cl.workflow_name = r.workflow_name;
        END IF;
        RETURN true;
    END IF;

    -- No room: parked until a slot frees, unless a holder's row is locked (a release may be
    -- committing unseen) or a slot is free but kept for a woken run whose hand-out parked it.
    v_until := queue.parked_vt();
    IF v_active >= p_total AND v_mine IS NOT TRUE
       AND (SELECT count(*) FROM (SELECT 1 FROM queue.workflow_run wr
                                   WHERE wr.workflow_name = r.workflow_name AND wr.slot_held
                                     FOR SHARE SKIP LOCKED) x) < v_active THEN
        v_until := clock_timestamp() + interval '250 milliseconds';
    END IF;
    EXECUTE format('UPDATE queue.%I SET vt = $2, read_ct = greatest(read_ct - 1, 0) WHERE msg_id = $1', 'q_' || p_queue)
        USING p_msg_id, v_until;
    INSERT INTO queue.concurrency_wait AS cw (workflow_name, concurrency_key, run_id, msg_id)
    VALUES (r.workflow_name, r.concurrency_key, r.run_id, p_msg_id)
    ON CONFLICT (workflow_name, concurrency_key, run_id)
    DO UPDATE SET msg_id = EXCLUDED.msg_id, woken = false;
    INSERT INTO queue.fair_key (workflow_name, concurrency_key, pass)
    SELECT r.workflow_name, r.concurrency_key, cl.fair_clock
      FROM queue.concurrency_limit cl WHERE cl.workflow_name = r.workflow_name
    ON CONFLICT (workflow_name, concurrency_key) DO NOTHING;
    RETURN false;
END $$;

-- Sets (p_limit 1 to 100000) or removes (null) the concurrency limit of a workflow's keys, with
-- its strategy (queue, cancel_in_progress, cancel_newest or skip; see V019__fleet_control) and,
-- optionally, the JSON path into a run's input whose value gives the run's key its limit
-- (p_limit_from), through p_limits (value to limit) when given; and a total limit over all its
-- keys (p_total_limit), under which waiting runs are woken round-robin by key, weighted by
-- p_weights (key to weight). Wakes the parked runs a higher limit or none lets through. Returns the
-- settings now in force (all null when removed).
DROP FUNCTION IF EXISTS queue.set_concurrency_limit(text, integer);
DROP FUNCTION IF EXISTS queue.set_concurrency_limit(text, integer, text, text, jsonb);
CREATE OR REPLACE FUNCTION queue.set_concurrency_limit(p_name text, p_limit integer, p_strategy text DEFAULT 'queue'::text, p_limit_from text DEFAULT NULL::text, p_limits jsonb DEFAULT NULL::jsonb, p_total_limit integer DEFAULT NULL::integer, p_weights jsonb DEFAULT NULL::jsonb)
 RETURNS queue.concurrency_limit
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    k      record;
    cl     queue.concurrency_limit;
    v_held int;
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    IF p_limit IS NULL THEN
        IF coalesce(p_strategy, 'queue') <> 'queue' OR p_limit_from IS NOT NULL OR p_limits IS NOT NULL
           OR p_total_limit IS NOT NULL OR p_weights IS NOT NULL THEN
            RAISE EXCEPTION 'limit is required with a strategy, limitFrom, limits, totalLimit or weights (a null limit removes the limit)'
                USING ERRCODE = '22023';
        END IF;
        DELETE FROM queue.concurrency_limit WHERE workflow_name = p_name;
    ELSE
        PERFORM queue.check_range('limit', p_limit, 1, 100000);
        PERFORM queue.check_concurrency_strategy(coalesce(p_strategy, 'queue'), p_limit_from, p_limits);
        PERFORM queue.check_fairness(p_total_limit, p_weights);
        INSERT INTO queue.concurrency_limit AS l (workflow_name, max_active, strategy, limit_from, limits,
                                                  total_limit, weights)
        VALUES (p_name, p_limit, coalesce(p_strategy, 'queue'), p_limit_from, p_limits, p_total_limit, p_weights)
        ON CONFLICT (workflow_name) DO UPDATE
            SET max_active = EXCLUDED.max_active, strategy = EXCLUDED.strategy,
                limit_from = EXCLUDED.limit_from, limits = EXCLUDED.limits,
                total_limit = EXCLUDED.total_limit, weights = EXCLUDED.weights, updated_at = now()
        RETURNING * INTO cl;
    END IF;
    IF p_total_limit IS NOT NULL THEN
        -- Under the workflow's round-robin lock, as an admission.
        PERFORM pg_advisory_xact_lock(hashtextextended('fair' || chr(1) || p_name, 11));
        SELECT count(*) INTO v_held FROM queue.workflow_run wr WHERE wr.workflow_name = p_name AND wr.slot_held;
        v_held := v_held + (SELECT count(*) FROM queue.concurrency_wait cw WHERE cw.workflow_name = p_name AND cw.woken);
        PERFORM queue.flow_wake_fair(p_name, greatest(p_total_limit - v_held, 0));
        RETURN cl;
    END IF;
    -- Keys with a limit of their own are left alone.
    FOR k IN SELECT DISTINCT cw.concurrency_key FROM queue.concurrency_wait cw
              WHERE cw.workflow_name = p_name
                AND NOT EXISTS (SELECT 1 FROM queue.concurrency_key_limit kl
                                 WHERE kl.workflow_name = p_name AND kl.concurrency_key = cw.concurrency_key)
              ORDER BY 1 LOOP
        PERFORM queue.flow_wake_up_to(p_name, k.concurrency_key, p_limit);
    END LOOP;
    RETURN cl;
END $$;

-- Raises 22023 naming the field unless a total limit is 1 to 100000 and its weights (only with a
-- total limit) an object of at most 1000 keys, each weight a whole number from 1 to 1000.
CREATE OR REPLACE FUNCTION queue.check_fairness(p_total_limit integer, p_weights jsonb)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF p_total_limit IS NOT NULL THEN
        PERFORM queue.check_range('totalLimit', p_total_limit, 1, 100000);
    END IF;
    IF p_weights IS NULL THEN
        RETURN;
    END IF;
    IF p_total_limit IS NULL THEN
        RAISE EXCEPTION 'weights goes with totalLimit: they share its slots between keys' USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_whole_numbers('weights', p_weights, 1000, 1000);
END $$;

-- Raises 22023 naming the field unless a concurrency limit's strategy is one of queue,
-- cancel_in_progress, cancel_newest and skip, its limitFrom (when given) a JSON path of at most 255
-- characters, and its limits (when given, only with limitFrom) an object of at most 100 values,
-- each a whole number from 1 to 100000.
CREATE OR REPLACE FUNCTION queue.check_concurrency_strategy(p_strategy text, p_limit_from text, p_limits jsonb)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF p_strategy IS NULL OR p_strategy NOT IN ('queue', 'cancel_in_progress', 'cancel_newest', 'skip') THEN
        RAISE EXCEPTION 'strategy must be one of queue, cancel_in_progress, cancel_newest and skip, got "%"', p_strategy
            USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_json_path('limitFrom', p_limit_from, '$.plan');
    IF p_limits IS NOT NULL THEN
        IF p_limit_from IS NULL THEN
            RAISE EXCEPTION 'limits goes with limitFrom: it maps the value limitFrom reads to a limit'
                USING ERRCODE = '22023';
        END IF;
        PERFORM queue.check_whole_numbers('limits', p_limits, 100, 100000);
    END IF;
END $$;

-- A workflow's concurrency limit with its strategy and limitFrom (no row when it has none).
CREATE OR REPLACE FUNCTION queue.concurrency_settings_of(p_name text)
 RETURNS SETOF queue.concurrency_limit
 LANGUAGE sql
 STABLE
AS $$
    SELECT * FROM queue.concurrency_limit WHERE workflow_name = p_name;
$$;

-- The limit in force for a run's key: the key's own, else, under its workflow's limit, the one the
-- run's input gave it (p_slot_limit, limitFrom), else its workflow's (null: none).
CREATE OR REPLACE FUNCTION queue.run_concurrency_limit(p_name text, p_key text, p_slot_limit integer)
 RETURNS integer
 LANGUAGE sql
 STABLE
AS $$
    SELECT coalesce((SELECT kl.max_active FROM queue.concurrency_key_limit kl
                      WHERE kl.workflow_name = p_name AND kl.concurrency_key = p_key),
                    (SELECT coalesce(p_slot_limit, cl.max_active) FROM queue.concurrency_limit cl
                      WHERE cl.workflow_name = p_name));
$$;

-- Wakes as many parked runs of a workflow's key as p_limit (null: no limit) lets hold a slot
-- beside those holding one now, under the key's admission lock.
CREATE OR REPLACE FUNCTION queue.flow_wake_up_to(p_name text, p_key text, p_limit integer)
 RETURNS integer
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_held int;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('slot' || chr(1) || p_name || chr(1) || p_key, 11));
    SELECT count(*) INTO v_held FROM queue.workflow_run wr
     WHERE wr.workflow_name = p_name AND wr.concurrency_key = p_key AND wr.slot_held;
    RETURN queue.flow_wake(p_name, p_key,
                           CASE WHEN p_limit IS NULL THEN 2147483647 ELSE greatest(p_limit - v_held, 0) END);
END $$;

-- Sets (p_limit 1 to 100000) or removes (null) the concurrency limit of one key of a workflow, which
-- then holds for that key in place of the workflow's limit; wakes the parked runs of the key that
-- the limit now in force lets through. Returns the key's own limit (null when removed).
CREATE OR REPLACE FUNCTION queue.set_key_concurrency_limit(p_name text, p_key text, p_limit integer)
 RETURNS integer
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    PERFORM queue.check_flow_key(p_key);
    IF p_limit IS NULL THEN
        DELETE FROM queue.concurrency_key_limit kl
         WHERE kl.workflow_name = p_name AND kl.concurrency_key = p_key;
    ELSE
        PERFORM queue.check_range('limit', p_limit, 1, 100000);
        INSERT INTO queue.concurrency_key_limit (workflow_name, concurrency_key, max_active)
        VALUES (p_name, p_key, p_limit)
        ON CONFLICT (workflow_name, concurrency_key)
        DO UPDATE SET max_active = EXCLUDED.max_active, updated_at = now();
    END IF;
    PERFORM queue.flow_wake_up_to(p_name, p_key, queue.run_concurrency_limit(p_name, p_key, NULL));
    RETURN p_limit;
END $$;

-- One key's own concurrency limit (null: the key has none, its workflow's holds).
CREATE OR REPLACE FUNCTION queue.key_concurrency_limit_of(p_name text, p_key text)
 RETURNS integer
 LANGUAGE sql
 STABLE
AS $$
    SELECT max_active FROM queue.concurrency_key_limit WHERE workflow_name = p_name AND concurrency_key = p_key;
$$;

-- Replaced by run_concurrency_limit, which also reads the limit a run's input gave its key.
DROP FUNCTION IF EXISTS queue.concurrency_limit_for(text, text);

-- A workflow's keys with a concurrency limit of their own, by key.
CREATE OR REPLACE FUNCTION queue.key_concurrency_limits(p_name text)
 RETURNS TABLE(concurrency_key text, max_active integer)
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
AS $$
    SELECT kl.concurrency_key, kl.max_active FROM queue.concurrency_key_limit kl
     WHERE kl.workflow_name = p_name ORDER BY kl.concurrency_key;
$$;

-- A workflow's concurrency limit (null: none). This release reads concurrency_settings_of; servers
-- of release 0.1.0 read this, so it stays while a rolling upgrade may run them beside this one.
CREATE OR REPLACE FUNCTION queue.concurrency_limit_of(p_name text)
 RETURNS integer
 LANGUAGE sql
 STABLE
AS $$
    SELECT max_active FROM queue.concurrency_limit WHERE workflow_name = p_name;
$$;

-- Sets a key's token bucket (p_limit hand-outs per p_period_ms; the bucket starts full) or
-- removes it (both null); a suspension in force stays. Returns the key's row.
CREATE OR REPLACE FUNCTION queue.set_rate_limit(p_key text, p_limit integer, p_period_ms bigint)
 RETURNS queue.rate_limit
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    b queue.rate_limit;
BEGIN
    PERFORM queue.check_flow_key(p_key);
    IF (p_limit IS NULL) <> (p_period_ms IS NULL) THEN
        RAISE EXCEPTION 'limit and periodMs go together' USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NOT NULL THEN
        PERFORM queue.check_range('limit', p_limit, 1, 1000000);
        PERFORM queue.check_range('periodMs', p_period_ms, 1, 86400000);
    END IF;
    INSERT INTO queue.rate_limit AS rl (concurrency_key, max_tokens, period_ms, tokens, refilled_at)
    VALUES (p_key, p_limit, p_period_ms, coalesce(p_limit, 0), clock_timestamp())
    ON CONFLICT (concurrency_key) DO UPDATE
        SET max_tokens = EXCLUDED.max_tokens, period_ms = EXCLUDED.period_ms,
            tokens = EXCLUDED.tokens, refilled_at = EXCLUDED.refilled_at
    RETURNING * INTO b;
    IF b.max_tokens IS NULL AND b.suspended_until IS NULL THEN
        DELETE FROM queue.rate_limit rl WHERE rl.concurrency_key = p_key;
    END IF;
    RETURN b;
END $$;

-- A key's rate limit and suspension (no row when it has neither).
CREATE OR REPLACE FUNCTION queue.rate_limit_of(p_key text)
 RETURNS SETOF queue.rate_limit
 LANGUAGE sql
 STABLE
AS $$
    SELECT * FROM queue.rate_limit WHERE concurrency_key = p_key;
$$;

-- A step was told to back off (a rate-limited answer, retry after p_retry_after_ms): suspends every
-- run of the run's key until then (due tasks of the key are not handed out before; leased ones
-- finish) and hands this task back for then without counting the delivery. ok, stale or
-- not_running, and the time the run comes back.
CREATE OR REPLACE FUNCTION queue.workflow_rate_limited(p_run_id bigint, p_msg_id bigint, p_receipt bigint, p_retry_after_ms bigint)
 RETURNS TABLE(outcome text, resume_at timestamp with time zone)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
DECLARE
    r       queue.workflow_run := queue.workflow_lock(p_run_id);
    v_queue text := '__wf_' || r.workflow_name;
    v_until timestamptz;
BEGIN
    PERFORM queue.check_range('retryAfterMs', p_retry_after_ms, 0, 86400000);
    IF r.status <> 'running' THEN
        PERFORM queue.workflow_drop_message(v_queue, p_run_id, p_msg_id);
        RETURN QUERY SELECT 'not_running'::text, NULL::timestamptz;
        RETURN;
    END IF;
    IF r.current_msg_id IS DISTINCT FROM p_msg_id
       OR NOT queue.workflow_holds_lease(v_queue, p_msg_id, p_receipt) THEN
        RETURN QUERY SELECT 'stale'::text, NULL::timestamptz;
        RETURN;
    END IF;
    v_until := clock_timestamp() + make_interval(secs => p_retry_after_ms / 1000.0);
    IF r.concurrency_key IS NOT NULL THEN
        INSERT INTO queue.rate_limit AS rl (concurrency_key, suspended_until)
        VALUES (r.concurrency_key, v_until)
        ON CONFLICT (concurrency_key) DO UPDATE
            SET suspended_until = greatest(rl.suspended_until, EXCLUDED.suspended_until)
        RETURNING rl.suspended_until INTO v_until;
    END IF;
    EXECUTE format('UPDATE queue.%I SET vt = $2, read_ct = greatest(read_ct - 1, 0) WHERE msg_id = $1',
                   'q_' || v_queue)
        USING p_msg_id, v_until;
    RETURN QUERY SELECT 'ok'::text, v_until;
END $$;
