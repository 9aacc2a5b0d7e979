-- The workers each server sees, kept so that every server can list them. Each server writes what
-- it holds in memory every few seconds (not one write per poll); a row not seen for the expiry
-- is stale and deleted.

-- One worker of one workflow, as the server that saw it last reports it: its versions, its slots
-- (null when it did not say), whether it reads a task stream or polls, and when it was last seen.
CREATE TABLE queue.worker_seen (
    worker_id     text NOT NULL,
    workflow_name text NOT NULL,
    server_id     text NOT NULL,
    host          text NOT NULL,
    versions      integer[] NOT NULL,
    slots         integer,
    mode          text NOT NULL,
    last_seen     timestamptz NOT NULL,
    PRIMARY KEY (worker_id, workflow_name),
    CONSTRAINT worker_seen_check CHECK (mode IN ('stream', 'poll')
        AND length(worker_id) BETWEEN 1 AND 200 AND length(host) BETWEEN 1 AND 255)
);
-- A workflow's workers (the listing, and whether a run's version has a worker).
CREATE INDEX worker_seen_workflow_idx ON queue.worker_seen (workflow_name, last_seen);
-- Stale rows, oldest first (the expiry).
CREATE INDEX worker_seen_last_seen_idx ON queue.worker_seen (last_seen);
