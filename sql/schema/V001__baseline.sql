-- The schema as of the first release: every table, type and index of schema "queue".
-- Functions are not here: sql/functions/ holds the current definition of each, applied by the
-- Migrator after the schema in the same transaction. Per-queue tables (queue.q_<name>) are
-- created by queue.create_queue, not here.

CREATE SCHEMA IF NOT EXISTS queue;

-- A received message, as receive and receive_fifo return it.
CREATE TYPE queue.message AS (
    msg_id      bigint,
    read_ct     integer,
    enqueued_at timestamptz,
    vt          timestamptz,
    body        jsonb,
    headers     jsonb,
    group_id    text
);

-- One item of a completion batch, as workflow_complete_batch parses and classifies it.
CREATE TYPE queue.workflow_completion AS (
    ord        integer,
    run_id     bigint,
    msg_id     bigint,
    receipt    bigint,
    step_name  text,
    step_kind  text,
    output     jsonb,
    error      jsonb,
    started_at timestamptz,
    next       jsonb,
    result     jsonb,
    lease      integer,
    cls        text,
    read_ct    integer
);

CREATE TYPE queue.workflow_status AS ENUM ('running', 'completed', 'failed', 'cancelled');

-- Every queue's settings; its messages live in queue.q_<name>.
CREATE TABLE queue.queue_meta (
    queue_name         text PRIMARY KEY,
    fifo               boolean NOT NULL,
    visibility_timeout integer NOT NULL,
    max_receives       integer,
    created_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT queue_meta_max_receives_check
        CHECK (max_receives IS NULL OR (max_receives >= 1 AND max_receives <= 1000)),
    CONSTRAINT queue_meta_queue_name_check CHECK (queue_name ~ '^[a-z0-9_][a-z0-9_-]{0,47}$'),
    CONSTRAINT queue_meta_visibility_timeout_check
        CHECK (visibility_timeout >= 0 AND visibility_timeout <= 43200)
);

-- Messages received more than their queue's max_receives times, kept until re-driven or swept.
CREATE TABLE queue.dead_letter (
    dead_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_name  text NOT NULL REFERENCES queue.queue_meta (queue_name) ON DELETE CASCADE,
    msg_id      bigint NOT NULL,
    group_id    text,
    read_ct     integer NOT NULL,
    enqueued_at timestamptz NOT NULL,
    dead_at     timestamptz NOT NULL DEFAULT now(),
    body        jsonb NOT NULL,
    headers     jsonb
);
CREATE INDEX dead_letter_age_idx ON queue.dead_letter (dead_at);
CREATE INDEX dead_letter_queue_idx ON queue.dead_letter (queue_name, dead_id);

-- Topic subscriptions; pattern_regex is the pattern compiled once at subscribe.
CREATE TABLE queue.subscription (
    subscription_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pattern         text NOT NULL,
    pattern_regex   text NOT NULL,
    target_type     text NOT NULL,
    target          text NOT NULL,
    secret          text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT subscription_pattern_check CHECK (length(pattern) <= 255),
    CONSTRAINT subscription_target_type_check
        CHECK (target_type = ANY (ARRAY['queue', 'http', 'https', 'workflow'])),
    CONSTRAINT subscription_pattern_target_type_target_key UNIQUE (pattern, target_type, target)
);

-- Webhook deliveries: written by publish in the publisher's transaction, leased by the
-- deliverer, finished as delivered or dead.
CREATE TABLE queue.outbox (
    delivery_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subscription_id bigint NOT NULL
        REFERENCES queue.subscription (subscription_id) ON DELETE CASCADE,
    url             text NOT NULL,
    secret          text,
    topic           text NOT NULL,
    body            jsonb NOT NULL,
    headers         jsonb,
    status          text NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    CONSTRAINT outbox_check CHECK ((status = 'pending') = (finished_at IS NULL)),
    CONSTRAINT outbox_status_check CHECK (status = ANY (ARRAY['pending', 'delivered', 'dead']))
);
CREATE INDEX outbox_due_idx ON queue.outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_finished_idx ON queue.outbox (finished_at) WHERE status <> 'pending';

-- Declared here so that the CHECK constraints below can name them; the rules themselves are in
-- sql/functions/row_rules.sql, which replaces these bodies in the same transaction, before any
-- row is written.
CREATE FUNCTION queue.workflow_run_valid(
    p_name text, p_version integer, p_status queue.workflow_status, p_key text, p_keep integer,
    p_trace text, p_msg_id bigint, p_wait_step text, p_wait_event text, p_error jsonb,
    p_completed timestamptz)
RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE FUNCTION queue.workflow_step_valid(p_step_name text, p_kind text)
RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT true';

-- One row per run. A running run has current_msg_id, its message on queue __wf_<name> (group =
-- run id); while it waits for an event, wait_* say which and since when.
CREATE TABLE queue.workflow_run (
    run_id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow_name    text NOT NULL,
    workflow_version integer NOT NULL,
    status           queue.workflow_status NOT NULL DEFAULT 'running',
    input            jsonb,
    output           jsonb,
    error            jsonb,
    idempotency_key  text,
    current_msg_id   bigint,
    retention_days   integer NOT NULL,
    wait_step        text,
    wait_event       text,
    wait_match       jsonb,
    wait_since       timestamptz,
    trace_context    text,
    started_at       timestamptz NOT NULL DEFAULT now(),
    completed_at     timestamptz,
    CONSTRAINT workflow_run_valid CHECK (queue.workflow_run_valid(
        workflow_name, workflow_version, status, idempotency_key, retention_days, trace_context,
        current_msg_id, wait_step, wait_event, error, completed_at))
);
CREATE UNIQUE INDEX workflow_run_idempotency_idx ON queue.workflow_run (workflow_name, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX workflow_run_listing_idx ON queue.workflow_run (workflow_name, run_id DESC);
CREATE INDEX workflow_run_retention_idx ON queue.workflow_run (completed_at) WHERE status <> 'running';
CREATE INDEX workflow_run_status_idx ON queue.workflow_run (workflow_name, status, run_id DESC);

-- The journal: one row per finished step (seq is its order), written exactly once.
CREATE TABLE queue.workflow_step (
    run_id       bigint NOT NULL,
    step_name    text NOT NULL,
    seq          integer NOT NULL,
    kind         text NOT NULL,
    output       jsonb,
    error        jsonb,
    timed_out    boolean NOT NULL DEFAULT false,
    attempts     integer NOT NULL DEFAULT 1,
    started_at   timestamptz NOT NULL,
    completed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, step_name),
    CONSTRAINT workflow_step_valid CHECK (queue.workflow_step_valid(step_name, kind))
);
CREATE INDEX workflow_step_seq_idx ON queue.workflow_step (run_id, seq);

-- The versions workers serve, per workflow; a start without a version takes the newest.
CREATE TABLE queue.workflow_version (
    workflow_name text NOT NULL,
    version       integer NOT NULL,
    last_seen_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_name, version),
    CONSTRAINT workflow_version_version_check CHECK (version >= 1)
);
