-- A step's place in its run's journal (seq) is the run's last seq plus one,
-- and finding the last one read every journal row of the run: the journal's
-- key (run_id, step_name) does not order a run's rows by seq. A run's k-th
-- step cost k index entries and k row reads, so a run of n steps cost
-- n²/2 of them; at a few thousand steps each step took milliseconds.
--
-- An index on (run_id, seq) answers max(seq) with one entry, and gives the
-- journal's reads (ordered by seq) their order. The statements that compute
-- seq do not change; the planner takes the index for them.
CREATE INDEX workflow_step_seq_idx ON queue.workflow_step (run_id, seq);
