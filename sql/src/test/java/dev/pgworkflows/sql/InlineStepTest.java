package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.inline;
import static dev.pgworkflows.sql.WorkflowSql.poll;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * A lone inline completion locks only its message: it goes through while another transaction holds
 * the run's row, takes its step's attempts from the message, and a run that is no longer running
 * still gets the general path's answer and journals nothing.
 */
class InlineStepTest {

  @Test
  void anInlineStepDoesNotWaitForTheRunsRowLock() throws SQLException {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Connection holder = db.connect()) {
      Held h = startAndPoll(c, "lean");
      lockRun(holder, h);
      exec(c, "SET lock_timeout = '2s'");
      assertThat(inline(c, h, "a")).isEqualTo("ok:" + h.receipt());
      holder.rollback();

      // A run's end still locks the run: it changes the row.
      lockRun(holder, h);
      assertThatThrownBy(() -> finish(c, h, "b"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("lock timeout");
      holder.rollback();
      exec(c, "RESET lock_timeout");
      assertThat(finish(c, h, "b")).isEqualTo("ok");
      assertThat(query(c, "SELECT status::text FROM queue.workflow_run WHERE run_id = " + h.run()))
          .isEqualTo("completed");
    }
  }

  @Test
  void theStepsAttemptsComeFromTheMessage() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held first = startAndPoll(c, "again");
      // The lease runs out; the next poll receives the message a second time.
      exec(
          c,
          "UPDATE queue.q___wf_again SET vt = clock_timestamp() - interval '1 second'"
              + " WHERE msg_id = "
              + first.msg());
      Held second = poll(c, "again");
      assertThat(second.msg()).isEqualTo(first.msg());
      assertThat(inline(c, first, "a")).isEqualTo("stale:");
      assertThat(inline(c, second, "a")).isEqualTo("ok:" + second.receipt());
      assertThat(
              query(
                  c,
                  "SELECT attempts || ':' || kind FROM queue.workflow_step WHERE run_id = "
                      + second.run()))
          .isEqualTo("2:run");
      assertThat(query(c, "SELECT read_ct FROM queue.q___wf_again WHERE msg_id = " + second.msg()))
          .isEqualTo("1");
    }
  }

  @Test
  void aCancelledRunsContinuationIsNotRunning() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "gone");
      exec(c, "SELECT queue.workflow_cancel(" + h.run() + ")");
      assertThat(inline(c, h, "a")).isEqualTo("not_running:");
      assertThat(query(c, "SELECT count(*) FROM queue.q___wf_gone")).isEqualTo("0");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step WHERE run_id = " + h.run()))
          .isEqualTo("0");
    }
  }

  @Test
  void aBadContinuationIsRefusedAndChangesNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "bad");
      String before =
          query(
              c,
              "SELECT vt::text || read_ct || body FROM queue.q___wf_bad WHERE msg_id = " + h.msg());
      assertThatThrownBy(
              () -> complete(c, h, "a", "'{\"inline\": true, \"delayMs\": 5}'", "NULL", "60"))
          .hasMessageContaining("only an immediate continuation can be inline");
      assertThatThrownBy(() -> complete(c, h, "not a name!", "'{\"inline\": true}'", "NULL", "60"))
          .isInstanceOf(SQLException.class);
      assertThatThrownBy(() -> complete(c, h, "a", "'{\"inline\": true}'", "NULL", "0"))
          .hasMessageContaining("lease");
      assertThat(
              query(
                  c,
                  "SELECT vt::text || read_ct || body FROM queue.q___wf_bad WHERE msg_id = "
                      + h.msg()))
          .isEqualTo(before);
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step WHERE run_id = " + h.run()))
          .isEqualTo("0");
    }
  }

  /** Holds the run's row locked in an open transaction of {@code holder}. */
  private static void lockRun(Connection holder, Held h) throws SQLException {
    holder.setAutoCommit(false);
    exec(holder, "SELECT 1 FROM queue.workflow_run WHERE run_id = " + h.run() + " FOR UPDATE");
  }

  /** The run's last step, completing it; the outcome alone. */
  private static String finish(Connection c, Held h, String step) throws SQLException {
    return complete(c, h, step, "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60")
        .split(":")[0];
  }
}
