package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * The idempotency key is unique among keyed runs of a workflow and unkeyed runs are not in its
 * index; a journal insert leaves its run's row alone (no foreign-key lock on it).
 */
class RunKeysAndJournalLocksTest {

  private static String one(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      assertThat(rs.next()).as(sql).isTrue();
      return rs.getString(1);
    }
  }

  @Test
  void aKeyStartsOneRunPerWorkflowAndUnkeyedRunsAreNotIndexed() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String first =
          one(c, "SELECT run_id || ' ' || created FROM queue.workflow_start('lean', '1', 1, 'k')");
      String again =
          one(c, "SELECT run_id || ' ' || created FROM queue.workflow_start('lean', '2', 1, 'k')");
      assertThat(first).endsWith(" true");
      assertThat(again).isEqualTo(first.replace("true", "false"));
      // The same key in another workflow is another run.
      assertThat(one(c, "SELECT created FROM queue.workflow_start('other', '1', 1, 'k')"))
          .isEqualTo("t");
      for (int i = 0; i < 5; i++) {
        one(c, "SELECT created FROM queue.workflow_start('lean', '3')");
      }
      assertThat(one(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("7");
      assertThat(
              one(
                  c,
                  "SELECT count(*) FROM queue.workflow_run"
                      + " WHERE workflow_name = 'lean' AND idempotency_key = 'k'"))
          .isEqualTo("1");
      // Only keyed runs are in the key's index.
      assertThat(one(c, "SELECT pg_get_indexdef('queue.workflow_run_idempotency_idx'::regclass)"))
          .contains("(workflow_name, idempotency_key)")
          .endsWith("WHERE (idempotency_key IS NOT NULL)");
    }
  }

  @Test
  void aJournalInsertTakesNoLockOnItsRun() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String run = one(c, "SELECT run_id FROM queue.workflow_start('lean', '1')");
      String before = one(c, "SELECT xmax::text FROM queue.workflow_run WHERE run_id = " + run);
      try (Statement s = c.createStatement()) {
        s.execute(
            "INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, started_at)"
                + " VALUES ("
                + run
                + ", 'a', 1, 'run', now())");
      }
      assertThat(one(c, "SELECT xmax::text FROM queue.workflow_run WHERE run_id = " + run))
          .isEqualTo(before);
    }
  }
}
