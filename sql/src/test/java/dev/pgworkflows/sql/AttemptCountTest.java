package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.inline;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * The attempt a task reports counts the tries of the run's first step not yet journaled: a retry
 * counts, a hand-back of a task no worker saw does not, and a journaled step restarts the count.
 */
class AttemptCountTest {

  /** A polled task and the attempt it reported. */
  private record Polled(Held held, int attempt) {}

  @Test
  void aRetryCountsAndAHandBackOfAnUnseenTaskDoesNot() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.workflow_start('tries', '1'::jsonb)");
      Polled first = poll(c);
      assertThat(first.attempt()).isEqualTo(1);

      assertThat(retry(c, first.held(), false)).isEqualTo("ok");
      Polled unseen = poll(c);
      assertThat(unseen.attempt()).as("handed back unseen").isEqualTo(1);

      assertThat(retry(c, unseen.held(), true)).isEqualTo("ok");
      Polled retried = poll(c);
      assertThat(retried.attempt()).as("retried").isEqualTo(2);

      // The step goes through on its second attempt; the next one starts at 1.
      assertThat(inline(c, retried.held(), "a")).startsWith("ok:");
      assertThat(query(c, "SELECT attempts FROM queue.workflow_step WHERE step_name = 'a'"))
          .isEqualTo("2");
      assertThat(
              query(
                  c,
                  "SELECT read_ct FROM queue.q___wf_tries WHERE msg_id = " + retried.held().msg()))
          .isEqualTo("1");
    }
  }

  private static Polled poll(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT run_id, msg_id, receipt, attempt FROM queue.workflow_poll('tries', '{1}', 1,"
                    + " 60)")) {
      assertThat(rs.next()).as("a task is due").isTrue();
      return new Polled(new Held(rs.getLong(1), rs.getLong(2), rs.getLong(3)), rs.getInt(4));
    }
  }

  private static String retry(Connection c, Held h, boolean counts) throws SQLException {
    return query(
        c,
        String.format(
            "SELECT queue.workflow_retry(%d, %d, %d, 0, %b)",
            h.run(), h.msg(), h.receipt(), counts));
  }
}
