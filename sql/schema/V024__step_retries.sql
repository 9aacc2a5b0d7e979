-- A run's retrying step (sql/functions/step_retries.sql): the step whose last attempt failed and
-- will be tried again, and what an operator changed of its retries for this run.

CREATE TABLE queue.step_retry (
    run_id     bigint PRIMARY KEY REFERENCES queue.workflow_run (run_id) ON DELETE CASCADE,
    step_name  text NOT NULL,
    -- The run's message the retry was handed back on: the row speaks for the run only while this is
    -- its current message and the step has no journal row.
    msg_id     bigint NOT NULL,
    -- Attempts counted so far (the failed attempt's number; 0 after a reset).
    attempt    integer NOT NULL,
    error      jsonb,
    failed_at  timestamptz NOT NULL,
    -- When the next attempt is due, as the worker's backoff set it.
    due_at     timestamptz NOT NULL,
    -- Retries paused by an operator: the task is parked until they are resumed.
    paused_at  timestamptz,
    -- The operator's retry options for this step of this run (attempts, backoff, baseMs, maxMs,
    -- timeoutMs), carried to the worker in the task; null: the code's.
    options    jsonb,
    updated_at timestamptz NOT NULL DEFAULT now()
);
