-- Updates (sql/functions/updates.sql): requests into a run that a handler of its workflow answers.
-- Each is kept with its answer, so a repeat with the same idempotency key gets the first answer,
-- and goes with its run.
CREATE TABLE queue.workflow_update (
    update_id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id          bigint NOT NULL REFERENCES queue.workflow_run (run_id) ON DELETE CASCADE,
    name            text NOT NULL,
    input           jsonb,
    idempotency_key text,
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'completed', 'failed', 'refused')),
    output          jsonb,
    error           jsonb,
    sent_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    answered_at     timestamptz,
    CHECK ((status = 'pending') = (answered_at IS NULL))
);
CREATE UNIQUE INDEX workflow_update_key_idx ON queue.workflow_update (run_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX workflow_update_run_idx ON queue.workflow_update (run_id, update_id);
