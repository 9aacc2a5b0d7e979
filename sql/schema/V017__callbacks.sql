-- Callback URLs (sql/functions/callbacks.sql): a wait any HTTP client can complete with a token
-- that is an HMAC, under one of these keys, of the run and the callback's name.
CREATE TABLE queue.callback_key (
    key_id     integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    secret     bytea NOT NULL CHECK (length(secret) >= 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A run's callbacks, one per name: minted once (a repeat answers the same token), used at most
-- once, and gone with their run.
CREATE TABLE queue.workflow_callback (
    run_id      bigint NOT NULL REFERENCES queue.workflow_run (run_id) ON DELETE CASCADE,
    name        text NOT NULL,
    key_id      integer NOT NULL REFERENCES queue.callback_key (key_id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    resolved_at timestamptz,
    outcome     text CHECK (outcome IN ('resolved', 'rejected')),
    PRIMARY KEY (run_id, name),
    CHECK ((resolved_at IS NULL) = (outcome IS NULL))
);
