-- Least-privilege roles for pgworkflows. Run once as a superuser (or a role with CREATEROLE that
-- owns schema queue), after the schema is installed:
--
--   psql "$DATABASE_URL" -f sql/roles.sql
--
-- pgworkflows_worker  serves workflows: takes and completes tasks, and runs the background jobs
--                     (retention, schedules, deadlines, webhook delivery) when its process leads.
-- pgworkflows_client  starts, signals, cancels and reads runs.
--
-- Neither may read or write a table: each may only EXECUTE the functions its side needs, and those
-- run with the owner's rights (SECURITY DEFINER) and a fixed search_path. EXECUTE is taken from
-- PUBLIC on every function of schema queue, so only the owner and these roles may call them. Give a
-- login one role or both:
--
--   CREATE ROLE orders_app LOGIN PASSWORD '...' IN ROLE pgworkflows_client, pgworkflows_worker;
--
-- Running it again is harmless. Each later migration grants the roles its new functions.
DO $$
BEGIN
    IF to_regrole('pgworkflows_worker') IS NULL THEN
        CREATE ROLE pgworkflows_worker NOLOGIN;
    END IF;
    IF to_regrole('pgworkflows_client') IS NULL THEN
        CREATE ROLE pgworkflows_client NOLOGIN;
    END IF;
END $$;

SELECT queue.grant_roles() AS granted;
