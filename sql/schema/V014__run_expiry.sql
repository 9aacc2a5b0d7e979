-- When an ended run's retention passes, kept on its row and indexed, so that the sweeper finds the
-- runs due by an index range that stops at the first run not yet due. Before, the test was a filter
-- over an index of end times (completed_at + retention_days), and a pass that found fewer runs due
-- than its batch walked the whole index: seconds a pass at ten million runs. The column is set by
-- the trigger workflow_run_expiry (sql/functions/retention.sql) whenever a run ends.
ALTER TABLE queue.workflow_run ADD COLUMN expires_at timestamptz;

UPDATE queue.workflow_run
   SET expires_at = completed_at + make_interval(days => retention_days)
 WHERE status <> 'running';

-- The runs retention may pick, as workflow_run_retention_idx had them (V012), by expiry.
CREATE INDEX workflow_run_expiry_idx ON queue.workflow_run (expires_at)
    WHERE status <> 'running' AND (chain_first IS NULL OR run_id <> chain_first);
DROP INDEX queue.workflow_run_retention_idx;
