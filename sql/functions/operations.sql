-- Operating runs: pausing and resuming workflows, runs and queue groups; parking a group's head
-- and redriving it; restarting an ended run from a step (the later journal rows set aside) and
-- forking a run into a new one. The hand-out paths check the pauses themselves: workflow_poll,
-- workflow_start_leased, the inline continuations of workflow_complete.sql, and receive.

-- Pauses (p_paused true) or resumes a workflow: while paused, none of its runs is handed out and
-- starts are still taken. A resume wakes the workflow's waiting workers. P0002 for a workflow
-- nothing has started or served.
CREATE OR REPLACE FUNCTION queue.workflow_pause_set(p_name text, p_paused boolean)
 RETURNS TABLE(workflow_name text, paused boolean, paused_at timestamp with time zone)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    PERFORM queue.check_workflow_name(p_name);
    IF p_paused IS NULL THEN
        RAISE EXCEPTION 'paused must not be null' USING ERRCODE = '22023';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM queue.queue_meta m WHERE m.queue_name = '__wf_' || p_name)
       AND NOT EXISTS (SELECT 1 FROM queue.workflow_version v WHERE v.workflow_name = p_name) THEN
        RAISE EXCEPTION 'workflow "%" has no runs and no workers', p_name USING ERRCODE = 'P0002';
    END IF;
    IF p_paused THEN
        INSERT INTO queue.workflow_pause AS p (workflow_name) VALUES (p_name) ON CONFLICT DO NOTHING;
    ELSE
        DELETE FROM queue.workflow_pause p WHERE p.workflow_name = p_name;
        IF FOUND AND EXISTS (SELECT 1 FROM queue.queue_meta m WHERE m.queue_name = '__wf_' || p_name) THEN
            -- Due tasks waited while paused: their pollers hear of them now.
            PERFORM queue.notify_once('__wf_' || p_name);
        END IF;
    END IF;
    RETURN QUERY SELECT p_name, p_paused,
                        (SELECT p.paused_at FROM queue.workflow_pause p WHERE p.workflow_name = p_name);
END $$;

-- Pauses (p_paused true) or resumes one run. A paused run's task is not handed out: its timers
-- still come due, and workflow_poll parks a due task (vt parked_vt) instead of handing it out; a
-- step running at the pause finishes and its run is then handed back; a keyed run's task parked
-- for the pause gives up its slot or place in line (workflow_park_paused). A resume makes a parked
-- task due again, a keyed one to be admitted afresh, and wakes the workflow's pollers. Only
-- a running run can be paused (WF003 otherwise); a resume of a run that is not paused changes
-- nothing. Returns the run's workflow.
CREATE OR REPLACE FUNCTION queue.workflow_run_pause(p_run_id bigint, p_paused boolean)
 RETURNS text
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    r       queue.workflow_run := queue.workflow_lock(p_run_id);
    v_queue text := '__wf_' || r.workflow_name;
    v_made  boolean;
BEGIN
    IF p_paused IS NULL THEN
        RAISE EXCEPTION 'paused must not be null' USING ERRCODE = '22023';
    END IF;
    IF p_paused THEN
        IF r.status <> 'running' THEN
            RAISE EXCEPTION 'run % is %: only a running run can be paused', p_run_id, r.status
                USING ERRCODE = 'WF003';
        END IF;
        IF r.paused_at IS NULL THEN
            UPDATE queue.workflow_run wr SET paused_at = clock_timestamp() WHERE wr.run_id = p_run_id;
        END IF;
        RETURN r.workflow_name;
    END IF;
    IF r.paused_at IS NULL THEN
        RETURN r.workflow_name;
    END IF;
    UPDATE queue.workflow_run wr SET paused_at = NULL WHERE wr.run_id = p_run_id;
    -- A keyed run's admission decides again (flow_admit) when the poll receives its task. A task
    -- whose step's retries are paused (step_retries.sql) stays parked until they are resumed.
    IF r.status = 'running' AND r.current_msg_id IS NOT NULL AND NOT queue.step_retry_paused(r) THEN
        EXECUTE format('UPDATE queue.%I SET vt = clock_timestamp() WHERE msg_id = $1 AND vt = queue.parked_vt()'
                       ' RETURNING head', 'q_' || v_queue)
            USING r.current_msg_id INTO v_made;
        IF v_made THEN
            PERFORM queue.notify_once(v_queue);
        END IF;
    END IF;
    RETURN r.workflow_name;
END $$;

-- Trigger function (trigger workflow_run_pause_ends, below): a run that ends is no longer paused.
CREATE OR REPLACE FUNCTION queue.workflow_pause_ends()
 RETURNS trigger
 LANGUAGE plpgsql
AS $$
BEGIN
    NEW.paused_at := NULL;
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER workflow_run_pause_ends
    BEFORE UPDATE OF status ON queue.workflow_run
    FOR EACH ROW
    WHEN (NEW.status <> 'running' AND NEW.paused_at IS NOT NULL)
    EXECUTE FUNCTION queue.workflow_pause_ends();

-- Restarts a failed, cancelled or timed-out run from one of its journaled steps: that step's row
-- and every later one are set aside (kept in workflow_step_aside, never replayed), signals that
-- set-aside waits took go back to the inbox, and the run is running again with its error cleared
-- and its task due now (a deadline already passed is dropped). WF003 for a run in another state,
-- 22023 for a step not in its journal. Returns how many rows were set aside.
CREATE OR REPLACE FUNCTION queue.workflow_restart(p_run_id bigint, p_from_step text)
 RETURNS integer
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    r       queue.workflow_run := queue.workflow_lock(p_run_id);
    v_seq   int;
    v_steps text[];
    v_msg   bigint;
BEGIN
    IF r.status::text NOT IN ('failed', 'cancelled', 'timed_out') THEN
        RAISE EXCEPTION 'run % is %: only a failed, cancelled or timed-out run can be restarted',
            p_run_id, r.status USING ERRCODE = 'WF003';
    END IF;
    PERFORM queue.check_step_name(p_from_step);
    SELECT s.seq INTO v_seq FROM queue.workflow_step s WHERE s.run_id = p_run_id AND s.step_name = p_from_step;
    IF v_seq IS NULL THEN
        RAISE EXCEPTION 'run % has no step "%" in its journal', p_run_id, p_from_step USING ERRCODE = '22023';
    END IF;
    PERFORM queue.run_streams_restart(p_run_id, v_seq);
    WITH gone AS (
        DELETE FROM queue.workflow_step s WHERE s.run_id = p_run_id AND s.seq >= v_seq
        RETURNING s.*),
         kept AS (
        INSERT INTO queue.workflow_step_aside (run_id, step_name, seq, kind, output, error, timed_out,
                                               attempts, started_at, completed_at, state, state_version)
        SELECT g.run_id, g.step_name, g.seq, g.kind, g.output, g.error, g.timed_out, g.attempts,
               g.started_at, g.completed_at, g.state, g.state_version
          FROM gone g
        RETURNING step_name)
    SELECT array_agg(k.step_name) INTO v_steps FROM kept k;
    -- What the set-aside waits took, the replay's waits take again (a child's end among them).
    UPDATE queue.workflow_signal sg SET delivered_at = NULL, delivered_to = NULL
     WHERE sg.run_id = p_run_id AND sg.delivered_to = ANY (v_steps);
    v_msg := queue.enqueue('__wf_' || r.workflow_name,
                           jsonb_build_object('v', r.workflow_version, 'reason', 'resume'),
                           NULL, 0, p_run_id::text);
    UPDATE queue.workflow_run wr
       SET status = 'running', output = NULL, error = NULL, completed_at = NULL, current_msg_id = v_msg,
           paused_at = NULL, wait_step = NULL, wait_event = NULL, wait_match = NULL, wait_since = NULL,
           wait_arms = NULL, wait_all = NULL, wait_fired = NULL,
           deadline_at = CASE WHEN wr.deadline_at > clock_timestamp() THEN wr.deadline_at END
     WHERE wr.run_id = p_run_id;
    RETURN cardinality(v_steps);
END $$;

-- Forks a run into a new run of the same workflow and version: the journal rows before the named
-- step are copied, the input is the origin's (or p_input when p_with_input), the new run records
-- where it came from (forked_from_run, forked_from_step), keeps the origin's retention,
-- concurrency key and priority, and its first task is due now. 22023 for a step not in the
-- origin's journal. Returns the new run's id.
CREATE OR REPLACE FUNCTION queue.workflow_fork(p_run_id bigint, p_from_step text, p_input jsonb, p_with_input boolean)
 RETURNS bigint
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    o     queue.workflow_run;
    v_seq int;
    v_run bigint;
    v_msg bigint;
BEGIN
    SELECT * INTO o FROM queue.workflow_run wr WHERE wr.run_id = p_run_id FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workflow run % does not exist', p_run_id USING ERRCODE = 'P0002';
    END IF;
    PERFORM queue.check_step_name(p_from_step);
    SELECT s.seq INTO v_seq FROM queue.workflow_step s WHERE s.run_id = p_run_id AND s.step_name = p_from_step;
    IF v_seq IS NULL THEN
        RAISE EXCEPTION 'run % has no step "%" in its journal', p_run_id, p_from_step USING ERRCODE = '22023';
    END IF;
    v_run := nextval(pg_get_serial_sequence('queue.workflow_run', 'run_id'));
    v_msg := queue.enqueue('__wf_' || o.workflow_name,
                           jsonb_build_object('v', o.workflow_version, 'reason', 'start'),
                           NULL, 0, v_run::text);
    INSERT INTO queue.workflow_run (run_id, workflow_name, workflow_version, input, retention_days,
                                    current_msg_id, concurrency_key, priority, forked_from_run,
                                    forked_from_step)
    OVERRIDING SYSTEM VALUE
    VALUES (v_run, o.workflow_name, o.workflow_version,
            CASE WHEN coalesce(p_with_input, false) THEN coalesce(p_input, 'null'::jsonb) ELSE o.input END,
            o.retention_days, v_msg, o.concurrency_key, o.priority, p_run_id, p_from_step);
    INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, error, timed_out, attempts,
                                     started_at, completed_at, state, state_version)
    SELECT v_run, s.step_name, s.seq, s.kind, s.output, s.error, s.timed_out, s.attempts, s.started_at,
           s.completed_at, s.state, s.state_version
      FROM queue.workflow_step s
     WHERE s.run_id = p_run_id AND s.seq < v_seq
     ORDER BY s.seq;
    RETURN v_run;
END $$;

-- A run's journal with the rows restarts set aside: in step order, each set-aside row (setAside
-- true, with setAsideAt) before the row that replaced it.
CREATE OR REPLACE FUNCTION queue.workflow_journal_with_aside(p_run_id bigint)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SECURITY DEFINER
 SET search_path TO 'queue', 'pg_temp'
AS $$
    SELECT coalesce(jsonb_agg(x.row ORDER BY x.seq, x.aside_at NULLS LAST), '[]'::jsonb)
      FROM (SELECT s.seq, NULL::timestamptz AS aside_at,
                   jsonb_build_object(
                       'name', s.step_name, 'kind', s.kind, 'output', s.output, 'error', s.error,
                       'timedOut', s.timed_out, 'attempts', s.attempts, 'startedAt', s.started_at,
                       'completedAt', s.completed_at, 'setAside', false)
                   || CASE WHEN s.state IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('state', s.state) END AS row
              FROM queue.workflow_step s WHERE s.run_id = p_run_id
            UNION ALL
            SELECT a.seq, a.set_aside_at,
                   jsonb_build_object(
                       'name', a.step_name, 'kind', a.kind, 'output', a.output, 'error', a.error,
                       'timedOut', a.timed_out, 'attempts', a.attempts, 'startedAt', a.started_at,
                       'completedAt', a.completed_at, 'setAside', true, 'setAsideAt', a.set_aside_at)
                   || CASE WHEN a.state IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('state', a.state) END
              FROM queue.workflow_step_aside a WHERE a.run_id = p_run_id) x;
$$;

-- Raises 22023 unless the text is a message group id (1 to 128 characters).
CREATE OR REPLACE FUNCTION queue.check_group_id(p_group text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $$
BEGIN
    IF p_group IS NULL OR p_group = '' OR length(p_group) > 128 THEN
        RAISE EXCEPTION 'group must be 1 to 128 characters' USING ERRCODE = '22023';
    END IF;
END $$;

-- Pauses (p_paused true) or resumes a group of a queue: receives pass a paused group by (a message
-- of it already received stays with its consumer), sends still go in. A resume wakes the queue's
-- waiting receivers. WF001 for a workflow's queue, P0002 for a queue that does not exist, 22023
-- for a queue that is not FIFO (there every message is a head, and receives would walk the paused
-- backlog).
CREATE OR REPLACE FUNCTION queue.group_pause_set(p_queue text, p_group text, p_paused boolean)
 RETURNS boolean
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    PERFORM queue.check_not_workflow_queue(p_queue, 'group pauses');
    IF NOT (queue.meta(p_queue)).fifo THEN
        RAISE EXCEPTION 'group pauses are for FIFO queues; queue "%" is not FIFO', p_queue USING ERRCODE = '22023';
    END IF;
    PERFORM queue.check_group_id(p_group);
    IF p_paused IS NULL THEN
        RAISE EXCEPTION 'paused must not be null' USING ERRCODE = '22023';
    END IF;
    -- The queue's row is locked first, so that concurrent pauses of its groups count in turn.
    PERFORM 1 FROM queue.queue_meta qm WHERE qm.queue_name = p_queue FOR UPDATE;
    IF p_paused THEN
        INSERT INTO queue.group_pause (queue_name, group_id) VALUES (p_queue, p_group) ON CONFLICT DO NOTHING;
    ELSE
        DELETE FROM queue.group_pause gp WHERE gp.queue_name = p_queue AND gp.group_id = p_group;
        IF FOUND THEN
            PERFORM queue.notify_once(p_queue);
        END IF;
    END IF;
    UPDATE queue.queue_meta qm
       SET paused_groups = (SELECT count(*) FROM queue.group_pause gp WHERE gp.queue_name = p_queue)
     WHERE qm.queue_name = p_queue;
    RETURN p_paused;
END $$;

-- Whether a group of a queue is paused.
CREATE OR REPLACE FUNCTION queue.group_paused(p_queue text, p_group text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $$
    SELECT EXISTS (SELECT 1 FROM queue.group_pause gp WHERE gp.queue_name = p_queue AND gp.group_id = p_group);
$$;

-- Takes the oldest message of a group out of its queue into queue.parked_message, so that the group
-- goes on with its next message (promoted at once in a FIFO queue); returns it, no row when the
-- group has no message. A message a consumer holds is taken all the same (its delete then finds
-- nothing). WF001 for a workflow's queue, P0002 for a queue that does not exist.
CREATE OR REPLACE FUNCTION queue.group_park(p_queue text, p_group text)
 RETURNS SETOF queue.parked_message
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    m      queue.queue_meta;
    v      record;
    p      queue.parked_message;
BEGIN
    PERFORM queue.check_not_workflow_queue(p_queue, 'parking');
    m := queue.meta(p_queue);
    PERFORM queue.check_group_id(p_group);
    -- Row lock first, then the group's lock (in promote_next), as queue.delete takes them.
    EXECUTE format('DELETE FROM queue.%1$I WHERE msg_id = (SELECT o.msg_id FROM queue.%1$I o'
                   ' WHERE o.group_id = $1 ORDER BY o.msg_id LIMIT 1)'
                   ' RETURNING msg_id, group_id, read_ct, enqueued_at, body, headers, head', 'q_' || p_queue)
        USING p_group INTO v;
    IF v.msg_id IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO queue.parked_message (queue_name, msg_id, group_id, read_ct, enqueued_at, body, headers)
    VALUES (p_queue, v.msg_id, v.group_id, v.read_ct, v.enqueued_at, v.body, v.headers)
    RETURNING * INTO p;
    IF m.fifo AND v.head THEN
        PERFORM queue.promote_next(p_queue, p_group);
    END IF;
    RETURN NEXT p;
END $$;

-- A queue's parked messages, oldest parked first, after a parked-id cursor. P0002 for a queue that
-- does not exist.
CREATE OR REPLACE FUNCTION queue.parked_list(p_queue text, p_limit integer DEFAULT 100, p_after bigint DEFAULT 0)
 RETURNS SETOF queue.parked_message
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
BEGIN
    PERFORM queue.meta(p_queue);
    PERFORM queue.check_range('limit', p_limit, 1, 1000);
    RETURN QUERY SELECT * FROM queue.parked_message p
                  WHERE p.queue_name = p_queue AND p.parked_id > coalesce(p_after, 0)
                  ORDER BY p.parked_id LIMIT p_limit;
END $$;

-- Puts a parked message back into its queue as a new message (read count 0) at the end of its
-- group, and returns its new id. P0002 when the queue has no such parked message.
CREATE OR REPLACE FUNCTION queue.parked_redrive(p_queue text, p_parked_id bigint)
 RETURNS bigint
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    p queue.parked_message;
BEGIN
    PERFORM queue.check_not_workflow_queue(p_queue, 'redrive');
    PERFORM queue.meta(p_queue);
    DELETE FROM queue.parked_message x WHERE x.queue_name = p_queue AND x.parked_id = p_parked_id
    RETURNING * INTO p;
    IF p.parked_id IS NULL THEN
        RAISE EXCEPTION 'queue "%" has no parked message %', p_queue, p_parked_id USING ERRCODE = 'P0002';
    END IF;
    RETURN queue.enqueue(p_queue, p.body, p.headers, 0, p.group_id);
END $$;
