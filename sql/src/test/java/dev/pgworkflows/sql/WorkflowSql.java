package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The workflow functions as the tests call them: runs held by their lease, lone completions, and
 * the first column of what a query returns.
 */
final class WorkflowSql {
  private WorkflowSql() {}

  /** A run's current message, leased to the test under {@code receipt}. */
  record Held(long run, long msg, long receipt) {}

  /** Starts a run of {@code workflow} (input 1) and polls it as a worker of version 1. */
  static Held startAndPoll(Connection c, String workflow) throws SQLException {
    exec(c, "SELECT queue.workflow_start('" + workflow + "', '1'::jsonb)");
    return poll(c, workflow);
  }

  /** The next task of {@code workflow} for a worker of version 1; there must be one. */
  static Held poll(Connection c, String workflow) throws SQLException {
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

  /**
   * "outcome:next_receipt" of a lone workflow_complete_step for step {@code step} (kind run, output
   * 1; none when null); {@code next}, {@code result} and {@code lease} are SQL expressions.
   */
  static String complete(
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

  /** An inline step, as {@link #complete}. */
  static String inline(Connection c, Held h, String step) throws SQLException {
    return complete(c, h, step, "'{\"inline\": true}'", "NULL", "60");
  }

  /**
   * "outcome:journaled" of workflow_journal_steps journaling {@code steps} (a JSON array) under the
   * lease {@code h}.
   */
  static String journalSteps(Connection c, Held h, String steps) throws SQLException {
    return query(
        c,
        "SELECT outcome || ':' || journaled FROM queue.workflow_journal_steps("
            + h.run()
            + ", "
            + h.msg()
            + ", "
            + h.receipt()
            + ", '"
            + steps
            + "'::jsonb)");
  }

  /**
   * The outcome of queue.workflow_signal for a payload given as JSON text; {@code key} may be null.
   */
  static String signal(Connection c, long run, String event, String payload, String key)
      throws SQLException {
    return query(
        c,
        "SELECT outcome FROM queue.workflow_signal("
            + run
            + ", '"
            + event
            + "', '"
            + payload
            + "'::jsonb, "
            + (key == null ? "NULL" : "'" + key + "'")
            + ")");
  }

  static void exec(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /** The first column of every row. */
  static List<String> rows(Connection c, String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  /** The first column of the first row, which there must be. */
  static String query(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      assertThat(rs.next()).isTrue();
      return rs.getString(1);
    }
  }
}
