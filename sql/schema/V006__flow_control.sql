-- Flow control: concurrency limits per workflow and key, rate limits and suspensions per key, and
-- run priorities. Only runs started with a key or a priority carry anything here.

ALTER TABLE queue.workflow_run
    -- The run's key: concurrency limits count runs of one workflow and key, rate limits and
    -- suspensions apply to every run of the key (null: the run is not limited).
    ADD COLUMN concurrency_key text,
    -- 0 to 9, higher first (null: 0).
    ADD COLUMN priority        smallint,
    -- Whether the run holds one of its key's slots (a task leased or due-and-running).
    ADD COLUMN slot_held       boolean;

-- The runs holding a slot of a workflow's key (counted when a run asks for one).
CREATE INDEX workflow_run_slot_idx ON queue.workflow_run (workflow_name, concurrency_key)
    WHERE slot_held;

-- How many runs of one key of a workflow may hold a slot at once; a workflow without a row has no
-- limit.
CREATE TABLE queue.concurrency_limit (
    workflow_name text PRIMARY KEY,
    max_active    integer NOT NULL,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT concurrency_limit_max_active_check CHECK (max_active BETWEEN 1 AND 100000)
);

-- Runs waiting for a slot of their key, each with its parked message (vt 9999-12-31), oldest run
-- first. A woken run's slot has been freed for it and its message made due.
CREATE TABLE queue.concurrency_wait (
    workflow_name   text NOT NULL,
    concurrency_key text NOT NULL,
    run_id          bigint NOT NULL,
    msg_id          bigint NOT NULL,
    woken           boolean NOT NULL DEFAULT false,
    parked_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_name, concurrency_key, run_id)
);
-- The woken runs of a key: the slots kept for them.
CREATE INDEX concurrency_wait_woken_idx ON queue.concurrency_wait (workflow_name, concurrency_key)
    WHERE woken;

-- A key's token bucket (max_tokens per period_ms, null: no rate limit) and the time until which
-- its runs are suspended (a rate-limited answer of the API they call).
CREATE TABLE queue.rate_limit (
    concurrency_key text PRIMARY KEY,
    max_tokens      integer,
    period_ms       bigint,
    tokens          double precision NOT NULL DEFAULT 0,
    refilled_at     timestamptz NOT NULL DEFAULT now(),
    suspended_until timestamptz,
    CONSTRAINT rate_limit_bucket_check CHECK ((max_tokens IS NULL) = (period_ms IS NULL)
        AND (max_tokens IS NULL OR (max_tokens BETWEEN 1 AND 1000000 AND period_ms BETWEEN 1 AND 86400000)))
);
