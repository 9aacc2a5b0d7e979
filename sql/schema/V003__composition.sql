-- Composition: child runs linked to their parent, waits on several arms, and each run's signal
-- inbox.

-- A child run names its parent, the parent's step that started it, and what a cancel of the parent
-- does to it ('cancel' or 'abandon'); workflow_start_child sets all three.
ALTER TABLE queue.workflow_run
    ADD COLUMN parent_run_id    bigint,
    ADD COLUMN parent_step      text,
    ADD COLUMN on_parent_cancel text,
    -- A wait on several arms: [{"event", "match"}, ...], whether it needs all of them, and what has
    -- fired so far (an array as long as the arms, null where an arm has not fired).
    ADD COLUMN wait_arms        jsonb,
    ADD COLUMN wait_all         boolean,
    ADD COLUMN wait_fired       jsonb;

-- A parent's children, in start order.
CREATE INDEX workflow_run_parent_idx ON queue.workflow_run (parent_run_id, run_id)
    WHERE parent_run_id IS NOT NULL;

-- Every signal a run was sent: buffered until a wait takes it (delivered_at null), then kept as
-- delivered to that wait's step. Deleted with the run.
CREATE TABLE queue.workflow_signal (
    signal_id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id          bigint NOT NULL,
    event           text NOT NULL,
    payload         jsonb,
    idempotency_key text,
    sent_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    delivered_at    timestamptz,
    delivered_to    text,
    CONSTRAINT workflow_signal_event_check CHECK (length(event) BETWEEN 1 AND 128),
    CONSTRAINT workflow_signal_key_check CHECK (length(idempotency_key) BETWEEN 1 AND 255),
    CONSTRAINT workflow_signal_delivery_check CHECK ((delivered_at IS NULL) = (delivered_to IS NULL))
);
-- The inbox a wait looks in: a run's buffered signals of one event, oldest first.
CREATE INDEX workflow_signal_inbox_idx ON queue.workflow_signal (run_id, event, signal_id)
    WHERE delivered_at IS NULL;
-- A run's signals in order, and retention's delete.
CREATE INDEX workflow_signal_run_idx ON queue.workflow_signal (run_id, signal_id);
CREATE UNIQUE INDEX workflow_signal_key_idx ON queue.workflow_signal (run_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
