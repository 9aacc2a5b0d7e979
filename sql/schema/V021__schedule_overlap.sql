-- Schedules: what a tick does while the schedule's last run still runs, backfills, and a pause
-- after failed runs in a row (sql/functions/schedules.sql).
ALTER TABLE queue.schedule
    -- allow_all: start another run (as before); skip: start none; buffer_one: start it once the
    -- running run ends, one such tick at most; buffer_all: each such tick in turn; cancel_other:
    -- cancel the running run and start this one.
    ADD COLUMN overlap              text NOT NULL DEFAULT 'allow_all',
    -- Ticks waiting for the running run to end (buffer_one, buffer_all), oldest first.
    ADD COLUMN buffered             timestamptz[] NOT NULL DEFAULT '{}',
    -- The last run the schedule started.
    ADD COLUMN last_run_id          bigint,
    -- Pause the schedule once this many of its runs in a row failed (null: never).
    ADD COLUMN pause_after_failures integer,
    ADD COLUMN failures_in_row      integer NOT NULL DEFAULT 0,
    -- The last run whose end failures_in_row counts.
    ADD COLUMN counted_run_id       bigint,
    ADD CONSTRAINT schedule_overlap_check
        CHECK (overlap IN ('allow_all', 'skip', 'buffer_one', 'buffer_all', 'cancel_other')),
    ADD CONSTRAINT schedule_pause_after_failures_check
        CHECK (pause_after_failures IS NULL OR pause_after_failures BETWEEN 1 AND 1000),
    ADD CONSTRAINT schedule_buffered_check CHECK (cardinality(buffered) <= 1000);

-- Schedules with ticks waiting for their running run to end: what the ticker drains.
CREATE INDEX schedule_buffered_idx ON queue.schedule (name) WHERE cardinality(buffered) > 0;
