package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.inline;
import static dev.pgworkflows.sql.WorkflowSql.poll;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * workflow_journal_steps journals a parallel group's finished branches under the run's lease: in
 * array order after the journal, each once, with the attempts of the message's delivery, and leaves
 * the lease as it was; a receipt that lost the lease, an ended run and bad input change nothing.
 */
class JournalStepsTest {

  @Test
  void stepsAreJournaledInArrayOrderAfterTheJournalAndTheLeaseCarriesOn() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held first = startAndPoll(c, "fan");
      // The lease runs out; the second delivery is the one that journals.
      exec(
          c,
          "UPDATE queue.q___wf_fan SET vt = clock_timestamp() - interval '1 second'"
              + " WHERE msg_id = "
              + first.msg());
      Held h = poll(c, "fan");
      assertThat(inline(c, h, "before")).isEqualTo("ok:" + h.receipt());
      exec(c, "UPDATE queue.q___wf_fan SET read_ct = 2 WHERE msg_id = " + h.msg());
      String vt = query(c, "SELECT vt::text FROM queue.q___wf_fan WHERE msg_id = " + h.msg());

      assertThat(
              journal(
                  c,
                  h,
                  "[{\"name\": \"c\", \"kind\": \"run\", \"output\": 3,"
                      + " \"startedAt\": \"2026-01-02T03:04:05Z\"},"
                      + " {\"name\": \"a\", \"kind\": \"run\", \"output\": {\"x\": 1}},"
                      + " {\"name\": \"b\", \"kind\": \"run\","
                      + " \"error\": {\"type\": \"E\", \"message\": \"no\"}}]"))
          .isEqualTo("ok:3");
      assertThat(
              rows(
                  c,
                  "SELECT step_name || ':' || seq || ':' || kind || ':' || attempts || ':'"
                      + " || coalesce(output::text, '-') || ':' || coalesce(error ->> 'type', '-')"
                      + " FROM queue.workflow_step WHERE run_id = "
                      + h.run()
                      + " ORDER BY seq"))
          .containsExactly(
              "before:1:run:2:1:-", "c:2:run:2:3:-", "a:3:run:2:{\"x\": 1}:-", "b:4:run:2:-:E");
      assertThat(
              query(
                  c,
                  "SELECT started_at = '2026-01-02T03:04:05Z' FROM queue.workflow_step"
                      + " WHERE step_name = 'c' AND run_id = "
                      + h.run()))
          .isEqualTo("t");
      assertThat(
              query(
                  c,
                  "SELECT read_ct || ':' || (body ->> 'reason') || ':' || vt::text"
                      + " FROM queue.q___wf_fan WHERE msg_id = "
                      + h.msg()))
          .isEqualTo("1:resume:" + vt);
      // The same receipt goes on: a later batch counts from the restarted attempt.
      assertThat(journal(c, h, "[{\"name\": \"d\", \"kind\": \"run\", \"output\": 4}]"))
          .isEqualTo("ok:1");
      assertThat(
              query(
                  c,
                  "SELECT seq || ':' || attempts FROM queue.workflow_step WHERE step_name = 'd'"
                      + " AND run_id = "
                      + h.run()))
          .isEqualTo("5:1");
      assertThat(inline(c, h, "after")).isEqualTo("ok:" + h.receipt());
    }
  }

  @Test
  void aStepJournaledAlreadyIsNotRewritten() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "again");
      assertThat(journal(c, h, "[{\"name\": \"a\", \"kind\": \"run\", \"output\": 1}]"))
          .isEqualTo("ok:1");
      assertThat(
              journal(
                  c,
                  h,
                  "[{\"name\": \"a\", \"kind\": \"run\", \"output\": 99},"
                      + " {\"name\": \"b\", \"kind\": \"run\", \"output\": 2}]"))
          .isEqualTo("ok:1");
      assertThat(
              rows(
                  c,
                  "SELECT step_name || ':' || seq || ':' || output::text FROM queue.workflow_step"
                      + " WHERE run_id = "
                      + h.run()
                      + " ORDER BY seq"))
          .containsExactly("a:1:1", "b:2:2");
    }
  }

  @Test
  void aReceiptThatLostTheLeaseChangesNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held first = startAndPoll(c, "lost");
      exec(
          c,
          "UPDATE queue.q___wf_lost SET vt = clock_timestamp() - interval '1 second'"
              + " WHERE msg_id = "
              + first.msg());
      Held second = poll(c, "lost");
      String before = message(c, second);
      String step = "[{\"name\": \"a\", \"kind\": \"run\", \"output\": 1}]";
      assertThat(journal(c, first, step)).isEqualTo("stale:0");
      assertThat(journal(c, new Held(second.run(), second.msg() + 1, second.receipt()), step))
          .isEqualTo("stale:0");
      assertThat(message(c, second)).isEqualTo(before);
      assertThat(steps(c, second)).isEqualTo("0");
      assertThat(journal(c, second, step)).isEqualTo("ok:1");
    }
  }

  @Test
  void aRunThatEndedIsNotRunning() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "ended");
      exec(c, "SELECT queue.workflow_cancel(" + h.run() + ")");
      assertThat(journal(c, h, "[{\"name\": \"a\", \"kind\": \"run\", \"output\": 1}]"))
          .isEqualTo("not_running:0");
      assertThat(steps(c, h)).isEqualTo("0");
      assertThatThrownBy(
              () ->
                  journal(
                      c,
                      new Held(h.run() + 100, h.msg(), h.receipt()),
                      "[{\"name\": \"a\", \"kind\": \"run\"}]"))
          .isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("P0002"));
    }
  }

  @Test
  void badStepsAreRefusedWith22023AndChangeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "bad");
      String before = message(c, h);
      String[][] bad = {
        {
          "[{\"name\": \"a\", \"kind\": \"run\"}, {\"name\": \"s\", \"kind\": \"sleep\"}]",
          "steps[1].kind must be run"
        },
        {"[{\"name\": \"a\"}]", "steps[0].kind must be run"},
        {"[{\"name\": \"not a name!\", \"kind\": \"run\"}]", "step name"},
        {
          "[{\"name\": \"a\", \"kind\": \"run\"}, {\"name\": \"a\", \"kind\": \"run\"}]",
          "step \"a\" is in steps twice"
        },
        {"[{\"name\": \"a\", \"kind\": \"run\", \"error\": \"no\"}]", "steps[0].error"},
        {"[{\"name\": \"a\", \"kind\": \"run\", \"startedAt\": 5}]", "steps[0].startedAt"},
        {"[1]", "steps[0] must be an object"},
        {"[]", "steps"},
        {"{\"name\": \"a\"}", "steps must be a JSON array"},
        {
          "(SELECT jsonb_agg(jsonb_build_object('name', 's' || n, 'kind', 'run'))"
              + " FROM generate_series(1, 1001) n)",
          "steps"
        }
      };
      for (String[] b : bad) {
        assertThatThrownBy(() -> journal(c, h, b[0]))
            .as(b[0])
            .isInstanceOf(SQLException.class)
            .hasMessageContaining(b[1])
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
      }
      assertThat(message(c, h)).isEqualTo(before);
      assertThat(steps(c, h)).isEqualTo("0");
    }
  }

  /**
   * "outcome:journaled" of workflow_journal_steps for held {@code h}; {@code steps} is JSON text,
   * or a parenthesised SQL expression of jsonb.
   */
  private static String journal(Connection c, Held h, String steps) throws SQLException {
    boolean expression = steps.startsWith("(");
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT outcome, journaled FROM queue.workflow_journal_steps(?, ?, ?, "
                + (expression ? steps : "?::jsonb")
                + ")")) {
      ps.setLong(1, h.run());
      ps.setLong(2, h.msg());
      ps.setLong(3, h.receipt());
      if (!expression) {
        ps.setString(4, steps);
      }
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1) + ":" + rs.getInt(2);
      }
    }
  }

  /** The held message's lease, count and body. */
  private static String message(Connection c, Held h) throws SQLException {
    String table =
        query(
            c,
            "SELECT 'q___wf_' || workflow_name FROM queue.workflow_run WHERE run_id = " + h.run());
    return query(
        c,
        "SELECT vt::text || ' ' || read_ct || ' ' || body::text FROM queue."
            + table
            + " WHERE msg_id = "
            + h.msg());
  }

  private static String steps(Connection c, Held h) throws SQLException {
    return query(c, "SELECT count(*) FROM queue.workflow_step WHERE run_id = " + h.run());
  }
}
