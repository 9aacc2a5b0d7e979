package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * A lone inline completion locks only its message: it goes through while another transaction holds
 * the run's row, takes its step's attempts from the message, and a run that is no longer running
 * still gets the general path's answer and journals nothing.
 */
class LeanContinuationTest {

  private record Held(long run, long msg, long receipt) {}

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
              () -> call(c, h, "a", "'{\"inline\": true, \"delayMs\": 5}'", "NULL", "60"))
          .hasMessageContaining("only an immediate continuation can be inline");
      assertThatThrownBy(() -> call(c, h, "not a name!", "'{\"inline\": true}'", "NULL", "60"))
          .isInstanceOf(SQLException.class);
      assertThatThrownBy(() -> call(c, h, "a", "'{\"inline\": true}'", "NULL", "0"))
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

  private static Held startAndPoll(Connection c, String workflow) throws SQLException {
    exec(c, "SELECT queue.workflow_start('" + workflow + "', '1'::jsonb)");
    return poll(c, workflow);
  }

  /** Holds the run's row locked in an open transaction of {@code holder}. */
  private static void lockRun(Connection holder, Held h) throws SQLException {
    holder.setAutoCommit(false);
    exec(holder, "SELECT 1 FROM queue.workflow_run WHERE run_id = " + h.run() + " FOR UPDATE");
  }

  private static void exec(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static Held poll(Connection c, String workflow) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT run_id, msg_id, receipt FROM queue.workflow_poll('"
                    + workflow
                    + "', '{1}', 1, 60)")) {
      assertThat(rs.next()).isTrue();
      return new Held(rs.getLong(1), rs.getLong(2), rs.getLong(3));
    }
  }

  private static String inline(Connection c, Held h, String step) throws SQLException {
    return call(c, h, step, "'{\"inline\": true}'", "NULL", "60");
  }

  /** "outcome:next_receipt" of a lone completion; next, result and lease as SQL expressions. */
  private static String call(
      Connection c, Held h, String step, String next, String result, String lease)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT outcome, next_receipt FROM queue.workflow_complete_step(?, ?, ?, ?, 'run',"
                + " '1'::jsonb, NULL, NULL, "
                + next
                + "::jsonb, "
                + result
                + "::jsonb, "
                + lease
                + ")")) {
      ps.setLong(1, h.run());
      ps.setLong(2, h.msg());
      ps.setLong(3, h.receipt());
      ps.setString(4, step);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1) + ":" + (rs.getString(2) == null ? "" : rs.getString(2));
      }
    }
  }

  /** The run's last step, completing it; the outcome alone. */
  private static String finish(Connection c, Held h, String step) throws SQLException {
    return call(c, h, step, "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60")
        .split(":")[0];
  }

  private static String query(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      assertThat(rs.next()).isTrue();
      return rs.getString(1);
    }
  }
}
