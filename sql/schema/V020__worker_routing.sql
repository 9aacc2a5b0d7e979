-- Worker labels and sticky runs (sql/functions/worker_routing.sql).

-- What a worker declared of itself: label name to value, e.g. {"region": "eu", "gpu": "true"}.
ALTER TABLE queue.worker_seen
    ADD COLUMN labels jsonb NOT NULL DEFAULT '{}'::jsonb;

-- Which workers take a workflow's tasks: only those whose labels hold every label of require;
-- those whose labels hold prefer while the registry lists one, any of require's otherwise; and,
-- when sticky, each run's later tasks go to the worker that took its last task while that worker
-- is listed.
CREATE TABLE queue.worker_routing (
    workflow_name text PRIMARY KEY,
    require       jsonb,
    prefer        jsonb,
    sticky        boolean NOT NULL DEFAULT false,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT worker_routing_check CHECK (require IS NOT NULL OR prefer IS NOT NULL OR sticky)
);

-- The lanes of a workflow's tasks that need labels: a task routed to a lane is handed out only to a
-- worker whose labels hold the lane's selector. One row per selector ever routed to.
CREATE TABLE queue.route_lane (
    workflow_name text NOT NULL,
    lane          text NOT NULL,
    selector      jsonb NOT NULL,
    PRIMARY KEY (workflow_name, lane)
);

ALTER TABLE queue.workflow_run
    -- The worker a run of a sticky workflow sticks to: its new tasks go to that worker alone.
    ADD COLUMN sticky_worker text;

-- The runs sticking to a worker (what a worker's leaving frees).
CREATE INDEX workflow_run_sticky_idx ON queue.workflow_run (workflow_name, sticky_worker)
    WHERE sticky_worker IS NOT NULL;
