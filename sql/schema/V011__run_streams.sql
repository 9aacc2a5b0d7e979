-- Streams of output a run writes as it goes (progress, tokens), read live while it runs. A stream
-- belongs to its run and goes with it (ON DELETE CASCADE: retention deletes the run row).

-- One named stream of a run: the offset its next entry takes and when it was closed. A stream
-- also ends when its run does (the run's status says so; nothing here changes then).
CREATE TABLE queue.run_stream (
    run_id      bigint NOT NULL REFERENCES queue.workflow_run (run_id) ON DELETE CASCADE,
    stream_name text NOT NULL,
    next_offset bigint NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    closed_at   timestamptz,
    PRIMARY KEY (run_id, stream_name),
    CONSTRAINT run_stream_check CHECK (stream_name ~ '^[a-zA-Z0-9._-]{1,128}$' AND stream_name !~ '^\.+$'
        AND next_offset >= 0)
);

-- One entry: its offset (dense from 0 per stream, given in the database) and the identity of its
-- write, (writer, seq): a step's name and the write's index within the step's attempt, or '' and
-- the index of the body's write. A retried attempt or a replayed body writes the same identities
-- again; the unique key makes those no-ops.
CREATE TABLE queue.run_stream_entry (
    run_id        bigint NOT NULL,
    stream_name   text NOT NULL,
    stream_offset bigint NOT NULL,
    writer        text NOT NULL,
    seq           integer NOT NULL,
    value         jsonb NOT NULL,
    written_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, stream_name, stream_offset),
    UNIQUE (run_id, stream_name, writer, seq),
    FOREIGN KEY (run_id, stream_name) REFERENCES queue.run_stream (run_id, stream_name) ON DELETE CASCADE,
    CONSTRAINT run_stream_entry_check CHECK (stream_offset >= 0 AND seq >= 0
        AND (writer = '' OR writer ~ '^[a-zA-Z0-9._-]{1,128}$'))
);
