-- Per-run state: a small map of keys to JSON values that a run's body and steps set and callers
-- read from outside. Each journal row holds the changes made with it (key to value, JSON null for a
-- removed key), written in the row's own transaction; a run's state is the fold of its rows in seq
-- order. So state is exactly-once with its step, goes with its run at retention, is set aside by a
-- restart and copied by a fork, like the rows themselves.
ALTER TABLE queue.workflow_step ADD COLUMN state jsonb;
ALTER TABLE queue.workflow_step_aside ADD COLUMN state jsonb;

-- A key's version is the state_version of the row that last set it: drawn from one sequence, and
-- only for rows that carry state, so versions only grow, also after a restart reuses seqs (a fork
-- keeps the copied rows' versions; its later rows draw greater ones).
CREATE SEQUENCE queue.workflow_state_version_seq AS bigint;
ALTER TABLE queue.workflow_step ADD COLUMN state_version bigint;
ALTER TABLE queue.workflow_step_aside ADD COLUMN state_version bigint;

-- A batch completion item carries its step's state changes too.
ALTER TYPE queue.workflow_completion ADD ATTRIBUTE state jsonb;
