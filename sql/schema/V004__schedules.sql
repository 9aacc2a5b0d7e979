-- Cron schedules owned by the server: each starts a run of its workflow at every tick of its cron
-- expression in its time zone. The server computes ticks (the cron parser is in Java); the tick
-- itself, starting the run and moving next_tick on, is one transaction under the row's lock
-- (schedule_fire), so servers sharing the database start one run per tick.
CREATE TABLE queue.schedule (
    name          text PRIMARY KEY,
    workflow_name text NOT NULL,
    cron          text NOT NULL,
    zone          text NOT NULL DEFAULT 'UTC',
    input         jsonb,
    -- What a server does with ticks missed while no server ran: skip them, run the latest, or run
    -- each of them (at most max_catch_up, the latest ones, oldest first).
    catch_up      text NOT NULL DEFAULT 'skip',
    max_catch_up  integer NOT NULL DEFAULT 100,
    paused        boolean NOT NULL DEFAULT false,
    -- The next tick to run; null when the expression has no future tick.
    next_tick     timestamptz,
    last_tick     timestamptz,
    -- 'api' when made through the API, 'code' when a worker registered it from its definition.
    source        text NOT NULL DEFAULT 'api',
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT schedule_name_check CHECK (name ~ '^[a-z0-9_-]{1,64}$'),
    CONSTRAINT schedule_workflow_check CHECK (workflow_name ~ '^[a-z0-9_][a-z0-9_-]{0,42}$'),
    CONSTRAINT schedule_cron_check CHECK (length(cron) BETWEEN 1 AND 256),
    CONSTRAINT schedule_zone_check CHECK (length(zone) BETWEEN 1 AND 64),
    CONSTRAINT schedule_catch_up_check CHECK (catch_up IN ('skip', 'latest', 'all')),
    CONSTRAINT schedule_max_catch_up_check CHECK (max_catch_up BETWEEN 1 AND 1000),
    CONSTRAINT schedule_source_check CHECK (source IN ('api', 'code'))
);

-- The ticker's query: schedules due by now, earliest first.
CREATE INDEX schedule_due_idx ON queue.schedule (next_tick) WHERE NOT paused;
