package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.poll;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A paused run stands aside: a keyed one gives its concurrency slot, or its turn for one, to the
 * next run of its key and is admitted afresh after its resume; a resume racing a poll never leaves
 * the run's task parked; a run that ends or is restarted is no longer paused.
 */
class PausedRunsTest {

  private static final String COMPLETED = "'{\"status\": \"completed\", \"output\": 1}'";

  private static long startKeyed(Connection c, String workflow) throws SQLException {
    return Long.parseLong(
        query(
            c,
            "SELECT run_id FROM queue.workflow_start('"
                + workflow
                + "', '1'::jsonb, NULL, NULL, NULL, 365, NULL, '{\"concurrencyKey\": \"k\"}'::jsonb)"));
  }

  /** The tasks one poll of up to 10 hands out. */
  private static List<Held> handed(Connection c, String workflow) throws SQLException {
    List<Held> out = new ArrayList<>();
    try (PreparedStatement p =
            c.prepareStatement(
                "SELECT run_id, msg_id, receipt FROM queue.workflow_poll(?, '{1}', 10, 60)");
        ResultSet rs = setAndRun(p, workflow)) {
      while (rs.next()) {
        out.add(new Held(rs.getLong(1), rs.getLong(2), rs.getLong(3)));
      }
    }
    return out;
  }

  private static ResultSet setAndRun(PreparedStatement p, String workflow) throws SQLException {
    p.setString(1, workflow);
    return p.executeQuery();
  }

  private static String slotsHeld(Connection c, String workflow) throws SQLException {
    return query(
        c,
        "SELECT count(*) FROM queue.workflow_run WHERE slot_held AND workflow_name = '"
            + workflow
            + "'");
  }

  @Test
  void aPausedRunHoldingTheSlotOfItsKeyLetsTheNextRunOfTheKeyGo() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('keyed', 1)");
      long a = startKeyed(c, "keyed");
      long b = startKeyed(c, "keyed");
      List<Held> first = handed(c, "keyed");
      assertThat(first).extracting(Held::run).containsExactly(a);
      Held held = first.get(0);
      // A's step failed and backs off: the same message, the slot still held.
      assertThat(
              query(
                  c,
                  "SELECT queue.workflow_retry("
                      + a
                      + ", "
                      + held.msg()
                      + ", "
                      + held.receipt()
                      + ", 0)"))
          .isEqualTo("ok");
      exec(c, "SELECT queue.workflow_run_pause(" + a + ", true)");

      List<Held> next = handed(c, "keyed");
      assertThat(next).extracting(Held::run).containsExactly(b);
      assertThat(slotsHeld(c, "keyed")).isEqualTo("1");

      // A resumed is admitted afresh: it waits while B holds the slot, and runs after B.
      exec(c, "SELECT queue.workflow_run_pause(" + a + ", false)");
      assertThat(handed(c, "keyed")).isEmpty();
      assertThat(complete(c, next.get(0), "s", "NULL", COMPLETED, "60")).isEqualTo("ok:");
      assertThat(handed(c, "keyed")).extracting(Held::run).containsExactly(a);
      assertThat(slotsHeld(c, "keyed")).isEqualTo("1");
    }
  }

  @Test
  void aPausedRunWokenForAFreedSlotPassesItToTheNextRunOfItsKey() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('line', 1)");
      long a = startKeyed(c, "line");
      long b = startKeyed(c, "line");
      long d = startKeyed(c, "line");
      List<Held> first = handed(c, "line");
      assertThat(first).extracting(Held::run).containsExactly(a);
      exec(c, "SELECT queue.workflow_run_pause(" + b + ", true)");

      // A ends and wakes B, which is paused: D, next in line, takes the slot.
      assertThat(complete(c, first.get(0), "s", "NULL", COMPLETED, "60")).isEqualTo("ok:");
      List<Held> next = handed(c, "line");
      assertThat(next).extracting(Held::run).containsExactly(d);
      assertThat(
              query(
                  c,
                  "SELECT (vt = queue.parked_vt()) || ':' || read_ct FROM queue.q___wf_line"
                      + " WHERE group_id = '"
                      + b
                      + "'"))
          .isEqualTo("true:0");

      exec(c, "SELECT queue.workflow_run_pause(" + b + ", false)");
      assertThat(handed(c, "line")).isEmpty();
      assertThat(complete(c, next.get(0), "s", "NULL", COMPLETED, "60")).isEqualTo("ok:");
      assertThat(handed(c, "line")).extracting(Held::run).containsExactly(b);
    }
  }

  @Test
  void aPollThatMeetsAResumeInProgressLooksAgainInASecondInsteadOfParking() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Connection resumer = db.connect()) {
      exec(c, "SELECT queue.workflow_start('race', '1'::jsonb)");
      long run = Long.parseLong(query(c, "SELECT min(run_id) FROM queue.workflow_run"));
      exec(c, "SELECT queue.workflow_run_pause(" + run + ", true)");

      // The resume has run but not committed when the poll reads the run as paused.
      resumer.setAutoCommit(false);
      exec(resumer, "SELECT queue.workflow_run_pause(" + run + ", false)");
      assertThat(handed(c, "race")).isEmpty();
      resumer.commit();

      assertThat(
              query(
                  c,
                  "SELECT (vt < queue.parked_vt()) || ':' || read_ct FROM queue.q___wf_race"
                      + " WHERE group_id = '"
                      + run
                      + "'"))
          .isEqualTo("true:0");
      Thread.sleep(1100);
      assertThat(handed(c, "race")).extracting(Held::run).containsExactly(run);
    }
  }

  @Test
  void aRunThatEndsIsNoLongerPaused() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held done = startAndPoll(c, "ends");
      exec(c, "SELECT queue.workflow_run_pause(" + done.run() + ", true)");
      assertThat(
              complete(
                  c,
                  done,
                  "s",
                  "NULL",
                  "'{\"status\": \"failed\", \"error\": {\"message\": \"boom\"}}'",
                  "60"))
          .isEqualTo("ok:");

      exec(c, "SELECT queue.workflow_start('ends', '2'::jsonb)");
      long cancelled = Long.parseLong(query(c, "SELECT max(run_id) FROM queue.workflow_run"));
      exec(c, "SELECT queue.workflow_run_pause(" + cancelled + ", true)");
      exec(c, "SELECT queue.workflow_cancel(" + cancelled + ")");

      exec(
          c,
          "SELECT queue.workflow_start('ends', '3'::jsonb, NULL, NULL, NULL, 365, NULL,"
              + " '{\"deadlineMs\": 60000}'::jsonb)");
      long expired = Long.parseLong(query(c, "SELECT max(run_id) FROM queue.workflow_run"));
      exec(c, "SELECT queue.workflow_run_pause(" + expired + ", true)");
      assertThat(
              rows(c, "SELECT run_id FROM queue.workflow_expire(10, now() + interval '2 minutes')"))
          .containsExactly(Long.toString(expired));

      assertThat(
              rows(
                  c,
                  "SELECT status || ':' || (paused_at IS NOT NULL) FROM queue.workflow_run"
                      + " ORDER BY run_id"))
          .containsExactly("failed:false", "cancelled:false", "timed_out:false");
    }
  }

  @Test
  void aRestartedRunIsNotPaused() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "again");
      assertThat(
              complete(
                  c,
                  h,
                  "s",
                  "NULL",
                  "'{\"status\": \"failed\", \"error\": {\"message\": \"boom\"}}'",
                  "60"))
          .isEqualTo("ok:");
      // An ended run whose row still says paused.
      exec(c, "UPDATE queue.workflow_run SET paused_at = now() WHERE run_id = " + h.run());
      exec(c, "SELECT queue.workflow_restart(" + h.run() + ", 's')");
      assertThat(
              query(
                  c,
                  "SELECT status || ':' || (paused_at IS NOT NULL) FROM queue.workflow_run"
                      + " WHERE run_id = "
                      + h.run()))
          .isEqualTo("running:false");
      assertThat(poll(c, "again").run()).isEqualTo(h.run());
    }
  }
}
