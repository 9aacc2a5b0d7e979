-- Start timing: a run whose first task is due later than its start (a delayed or a debounced
-- start), and a deadline after which the server ends a run that has not ended as timed_out.

-- Only PL/pgSQL bodies name the new value: it cannot be used in the transaction that adds it.
ALTER TYPE queue.workflow_status ADD VALUE IF NOT EXISTS 'timed_out';

ALTER TABLE queue.workflow_run
    -- When the run's first task is due, for a start that asked for later (null: at once).
    ADD COLUMN due_at       timestamptz,
    -- When the server ends the run as timed_out should it still be running (null: never).
    ADD COLUMN deadline_at  timestamptz,
    -- Starts with this key collapse into the run until its first task is handed out.
    ADD COLUMN debounce_key text;

-- The runs whose deadline has come, soonest first (workflow_expire).
CREATE INDEX workflow_run_deadline_idx ON queue.workflow_run (deadline_at)
    WHERE status = 'running' AND deadline_at IS NOT NULL;
-- A workflow's newest run of a debounce key (workflow_debounce).
CREATE INDEX workflow_run_debounce_idx ON queue.workflow_run (workflow_name, debounce_key, run_id DESC)
    WHERE debounce_key IS NOT NULL;
