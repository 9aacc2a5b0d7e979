-- Continue-as-new: a run ends and starts its successor (same workflow, fresh journal) in one
-- transaction. The runs so linked form a chain, which is listed, followed for its result, and
-- anchored by its first run while it goes on. The links are written only by
-- workflow_continue_as_new (the table keeps its row rules in its one CHECK, workflow_run_valid,
-- which these columns stay out of).

ALTER TABLE queue.workflow_run
    -- The run this one continues (null: it began its chain, or is in none).
    ADD COLUMN continued_from bigint,
    -- The run that continues this one; set only on a completed run.
    ADD COLUMN continued_to   bigint,
    -- The first run of the chain, on every run of a chain (the first one included); null for a run
    -- that never continued as new nor continues another.
    ADD COLUMN chain_first    bigint;

-- A chain's runs in order: its listing, and its last run (the newest with the chain's first).
CREATE INDEX workflow_run_chain_idx ON queue.workflow_run (chain_first, run_id)
    WHERE chain_first IS NOT NULL;

-- The runs retention may pick: ended runs, less the first run of each chain (it stays while its
-- chain goes on, and goes with the chain's last run), so a sweep does not step over the first run
-- of every long-running chain. It replaces the index of all ended runs: a run's end still writes
-- one retention entry.
DROP INDEX queue.workflow_run_retention_idx;
CREATE INDEX workflow_run_retention_idx ON queue.workflow_run (completed_at)
    WHERE status <> 'running' AND (chain_first IS NULL OR run_id <> chain_first);
