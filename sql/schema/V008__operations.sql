-- Operating runs: pauses of workflows, runs and queue groups; parked messages; restarts, which
-- set journal rows aside, and forks, which copy them into a new run.

-- A paused workflow: none of its runs is handed out until it is resumed; starts are still taken.
CREATE TABLE queue.workflow_pause (
    workflow_name text PRIMARY KEY,
    paused_at     timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE queue.workflow_run
    -- When the run was paused (null: it is not): its task is handed out only after a resume.
    ADD COLUMN paused_at        timestamptz,
    -- A forked run: the run it was forked from and the step from which it went its own way.
    ADD COLUMN forked_from_run  bigint,
    ADD COLUMN forked_from_step text;

-- Journal rows a restart set aside: kept for reading, never replayed; deleted with their run.
CREATE TABLE queue.workflow_step_aside (
    run_id       bigint NOT NULL REFERENCES queue.workflow_run (run_id) ON DELETE CASCADE,
    step_name    text NOT NULL,
    seq          integer NOT NULL,
    kind         text NOT NULL,
    output       jsonb,
    error        jsonb,
    timed_out    boolean NOT NULL,
    attempts     integer NOT NULL,
    started_at   timestamptz NOT NULL,
    completed_at timestamptz NOT NULL,
    set_aside_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX workflow_step_aside_run_idx ON queue.workflow_step_aside (run_id, seq, set_aside_at);

-- A paused group of a queue: receives pass it by; sends still go in.
CREATE TABLE queue.group_pause (
    queue_name text NOT NULL REFERENCES queue.queue_meta (queue_name) ON DELETE CASCADE,
    group_id   text NOT NULL,
    paused_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_name, group_id)
);
-- How many of a queue's groups are paused, kept by group_pause_set: a receive reads it with the
-- queue's row and looks at groups only when it is not zero.
ALTER TABLE queue.queue_meta ADD COLUMN paused_groups integer NOT NULL DEFAULT 0;

-- Messages an operator took out of their group (so that it goes on with the next), kept until
-- redriven or their queue is dropped.
CREATE TABLE queue.parked_message (
    parked_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_name  text NOT NULL REFERENCES queue.queue_meta (queue_name) ON DELETE CASCADE,
    msg_id      bigint NOT NULL,
    group_id    text,
    read_ct     integer NOT NULL,
    enqueued_at timestamptz NOT NULL,
    parked_at   timestamptz NOT NULL DEFAULT now(),
    body        jsonb NOT NULL,
    headers     jsonb
);
CREATE INDEX parked_message_queue_idx ON queue.parked_message (queue_name, parked_id);
