-- Fleet control (sql/functions/flow_control.sql). Concurrency strategies: what a start does when its key is full,
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

-- Fairness between keys: a total limit over all keys of a workflow, under which waiting runs are
-- woken round-robin by key, weighted (flow_admit_fair, flow_wake_fair).
ALTER TABLE queue.concurrency_limit
    -- At most this many runs of the workflow's keys hold a slot at once (null: no total limit).
    ADD COLUMN total_limit integer,
    -- A key's weight in the round robin (key to weight, 1 to 1000; a key it does not name: 1).
    ADD COLUMN weights     jsonb,
    -- The virtual time of the latest admission under the total limit.
    ADD COLUMN fair_clock  double precision NOT NULL DEFAULT 0,
    ADD CONSTRAINT concurrency_limit_total_check CHECK (total_limit BETWEEN 1 AND 100000),
    ADD CONSTRAINT concurrency_limit_weights_check CHECK (weights IS NULL OR total_limit IS NOT NULL);

-- Each key's place in its workflow's round robin: its pass, the virtual time its admissions have
-- reached (each moves it on by 1 / the key's weight). A key with nobody waiting that the clock
-- has caught up with needs no row.
CREATE TABLE queue.fair_key (
    workflow_name   text NOT NULL,
    concurrency_key text NOT NULL,
    pass            double precision NOT NULL,
    PRIMARY KEY (workflow_name, concurrency_key)
);

-- Throttles: starts of a workflow beyond a rate wait their turn instead of being refused (GCRA,
-- sql/functions/throttles.sql): at most max_starts per period_ms, burst of them at once, for the
-- whole workflow or for each concurrency key of it (per_key).
CREATE TABLE queue.throttle (
    workflow_name text PRIMARY KEY,
    max_starts    integer NOT NULL,
    period_ms     bigint NOT NULL,
    burst         integer NOT NULL DEFAULT 1,
    per_key       boolean NOT NULL DEFAULT false,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT throttle_rate_check CHECK (max_starts BETWEEN 1 AND 1000000 AND period_ms BETWEEN 1 AND 86400000
                                          AND burst BETWEEN 1 AND 1000000)
);
-- Each throttle's theoretical arrival time: when its next start would be due were none bursting
-- ('' for the whole workflow, else a key).
CREATE TABLE queue.throttle_state (
    workflow_name text NOT NULL,
    throttle_key  text NOT NULL,
    tat           timestamptz NOT NULL,
    PRIMARY KEY (workflow_name, throttle_key)
);
ALTER TABLE queue.workflow_run
    -- The time a throttle made the run's start wait until (null: it did not).
    ADD COLUMN throttled_until timestamptz;

-- Event batches (sql/functions/batches.sql): a workflow subscription that batches starts one run
-- per batch of up to batch_max published messages, or batch_timeout_ms after the batch's first
-- message, one batch per value at batch_key (a JSON path into the message) when given.
ALTER TABLE queue.subscription
    ADD COLUMN batch_max        integer,
    ADD COLUMN batch_timeout_ms bigint,
    ADD COLUMN batch_key        text,
    ADD CONSTRAINT subscription_batch_check CHECK (
        (batch_max IS NULL) = (batch_timeout_ms IS NULL)
        AND (batch_max IS NULL OR (target_type = 'workflow' AND batch_max BETWEEN 1 AND 1000
                                   AND batch_timeout_ms BETWEEN 1 AND 86400000))
        AND (batch_key IS NULL OR batch_max IS NOT NULL));

-- Messages waiting in a batch, oldest first: they stay until the run of their batch is started,
-- in the same transaction that deletes them.
CREATE TABLE queue.batch_item (
    item_id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subscription_id bigint NOT NULL REFERENCES queue.subscription (subscription_id) ON DELETE CASCADE,
    batch_key       text NOT NULL,
    topic           text NOT NULL,
    body            jsonb,
    published_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX batch_item_batch_idx ON queue.batch_item (subscription_id, batch_key, item_id);

-- The batches that hold messages, each with the time its run is started however few it holds.
CREATE TABLE queue.batch_open (
    subscription_id bigint NOT NULL REFERENCES queue.subscription (subscription_id) ON DELETE CASCADE,
    batch_key       text NOT NULL,
    due_at          timestamptz NOT NULL,
    PRIMARY KEY (subscription_id, batch_key)
);
CREATE INDEX batch_open_due_idx ON queue.batch_open (due_at);
