-- The audit trail: operator actions (cancel, purge, delete, redrive, subscriptions, token and scope
-- changes), who did them by token name (never the token) and when. In the database, so every
-- server behind one PostgreSQL lists the same trail.

CREATE TABLE queue.audit (
    audit_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    actor      text NOT NULL,
    action     text NOT NULL,
    target     text,
    details    jsonb NOT NULL DEFAULT '{}'::jsonb,
    request_id text,
    CONSTRAINT audit_actor_check CHECK (length(actor) BETWEEN 1 AND 64),
    CONSTRAINT audit_action_check CHECK (action ~ '^[a-z][a-z_]*(\.[a-z][a-z_]*)+$' AND length(action) <= 64),
    CONSTRAINT audit_target_check CHECK (target IS NULL OR length(target) BETWEEN 1 AND 512),
    CONSTRAINT audit_details_check CHECK (jsonb_typeof(details) = 'object'),
    CONSTRAINT audit_request_id_check CHECK (request_id IS NULL OR length(request_id) BETWEEN 1 AND 64)
);

-- Listing one action's entries, newest first.
CREATE INDEX audit_action_idx ON queue.audit (action, audit_id);
