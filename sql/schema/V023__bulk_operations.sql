-- Bulk operations (sql/functions/bulk_operations.sql): an operator's action on every run a query
-- selects, as a job that advances a page at a time and survives a server's restart.

CREATE TABLE queue.bulk_operation (
    batch_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- cancel, signal, pause, resume, restart (from the failed step, or from_step when given)
    action      text NOT NULL,
    -- The query as the operator wrote it, and its tree (the server's parse).
    query       text,
    query_tree  jsonb,
    -- signal: {"event", "payload"}; restart: {"fromStep"} or {}.
    params      jsonb NOT NULL DEFAULT '{}'::jsonb,
    status      text NOT NULL DEFAULT 'running',
    -- How many runs the query selected when the job was made.
    selected    bigint NOT NULL,
    done        bigint NOT NULL DEFAULT 0,
    skipped     bigint NOT NULL DEFAULT 0,
    failed      bigint NOT NULL DEFAULT 0,
    -- Runs per second; a page of this many is taken each second.
    rate        integer NOT NULL,
    -- Runs still to act on have ids below next_before (the job walks newest first); runs started
    -- after the job was made are not its.
    next_before bigint NOT NULL,
    created_by  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    CONSTRAINT bulk_operation_action_check
        CHECK (action IN ('cancel', 'signal', 'pause', 'resume', 'restart')),
    CONSTRAINT bulk_operation_status_check
        CHECK (status IN ('running', 'completed', 'cancelled'))
);
CREATE INDEX bulk_operation_running_idx ON queue.bulk_operation (batch_id) WHERE status = 'running';

-- What the job did to each run, once: done, skipped (the run was not in a state the action fits)
-- or failed, with the reason.
CREATE TABLE queue.bulk_operation_run (
    batch_id bigint NOT NULL REFERENCES queue.bulk_operation (batch_id) ON DELETE CASCADE,
    run_id   bigint NOT NULL,
    outcome  text NOT NULL,
    detail   text,
    at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (batch_id, run_id),
    CONSTRAINT bulk_operation_run_outcome_check CHECK (outcome IN ('done', 'skipped', 'failed'))
);
