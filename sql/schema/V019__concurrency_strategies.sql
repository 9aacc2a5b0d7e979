-- Concurrency strategies (sql/functions/flow_control.sql): what a start does when its key is full,
-- and limits read from the run's input.
ALTER TABLE queue.concurrency_limit
    -- queue: the run waits for a slot; cancel_in_progress: a start cancels the key's running runs;
    -- cancel_newest: a start while the key is full is cancelled at once; skip: a start while the key
    -- is full makes no run and is answered with the key's newest running run.
    ADD COLUMN strategy   text NOT NULL DEFAULT 'queue',
    -- A JSON path into a run's input whose value gives the run's limit: through limits (value to
    -- limit) when set, else the value itself; a value limits does not name takes max_active.
    ADD COLUMN limit_from text,
    ADD COLUMN limits     jsonb,
    ADD CONSTRAINT concurrency_limit_strategy_check
        CHECK (strategy IN ('queue', 'cancel_in_progress', 'cancel_newest', 'skip')),
    ADD CONSTRAINT concurrency_limit_limits_check CHECK (limits IS NULL OR limit_from IS NOT NULL);

ALTER TABLE queue.workflow_run
    -- The limit the run's input gave its key (limit_from), under a key's own limit.
    ADD COLUMN slot_limit integer;

-- The running runs of a workflow's key, newest first: what a strategy counts and cancels.
CREATE INDEX workflow_run_key_running_idx ON queue.workflow_run (workflow_name, concurrency_key, run_id DESC)
    WHERE concurrency_key IS NOT NULL AND status = 'running';
