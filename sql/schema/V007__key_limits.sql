-- Concurrency limits for one key of a workflow, over the workflow's own limit: a key with a row
-- here is limited by it whether or not its workflow has a limit (flow_admit reads this row first).
CREATE TABLE queue.concurrency_key_limit (
    workflow_name   text NOT NULL,
    concurrency_key text NOT NULL,
    max_active      integer NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_name, concurrency_key),
    CONSTRAINT concurrency_key_limit_max_active_check CHECK (max_active BETWEEN 1 AND 100000)
);
