package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * workflow_continue_as_new is one transaction: when anything in it fails after the successor was
 * started, neither the successor nor the run's end nor the held step remain, and the lease still
 * holds for a second try; and what the successor takes over from the run it continues.
 */
class ContinueAsNewTest {

  private static String continueAsNew(WorkflowSql.Held h) {
    return "SELECT outcome || ':' || coalesce(continued_to::text, '')"
        + " FROM queue.workflow_continue_as_new("
        + h.run()
        + ", "
        + h.msg()
        + ", "
        + h.receipt()
        + ", '2', '{\"name\": \"charge\", \"kind\": \"run\", \"output\": 1}')";
  }

  @Test
  void aFailureAfterTheSuccessorStartedUndoesTheWholeContinuation() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      WorkflowSql.Held h = WorkflowSql.startAndPoll(c, "can");
      // Fails the last write of the continuation, the run's end, after the successor's start.
      exec(
          c,
          "CREATE FUNCTION public.refuse_end() RETURNS trigger LANGUAGE plpgsql AS"
              + " $$BEGIN RAISE EXCEPTION 'refused'; END$$");
      exec(
          c,
          "CREATE TRIGGER refuse_end BEFORE UPDATE ON queue.workflow_run FOR EACH ROW"
              + " WHEN (NEW.continued_to IS NOT NULL) EXECUTE FUNCTION public.refuse_end()");
      assertThatThrownBy(() -> query(c, continueAsNew(h)))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("refused");

      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("1");
      assertThat(query(c, "SELECT status::text FROM queue.workflow_run WHERE run_id = " + h.run()))
          .isEqualTo("running");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step")).isEqualTo("0");
      assertThat(
              query(
                  c,
                  "SELECT queue.workflow_holds_lease('__wf_can', "
                      + h.msg()
                      + ", "
                      + h.receipt()
                      + ")"))
          .isEqualTo("t");

      exec(c, "DROP TRIGGER refuse_end ON queue.workflow_run");
      exec(c, "DROP FUNCTION public.refuse_end()");
      String ok = query(c, continueAsNew(h));
      assertThat(ok).startsWith("ok:");
      String successor = ok.substring(3);
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("2");
      assertThat(
              query(
                  c,
                  "SELECT concat_ws(' ', status, continued_to, chain_first, output::text)"
                      + " FROM queue.workflow_run WHERE run_id = "
                      + h.run()))
          .isEqualTo(
              "completed " + successor + " " + h.run() + " {\"continuedTo\": " + successor + "}");
      assertThat(
              query(
                  c,
                  "SELECT concat_ws(' ', status, continued_from, chain_first, input::text)"
                      + " FROM queue.workflow_run WHERE run_id = "
                      + successor))
          .isEqualTo("running " + h.run() + " " + h.run() + " 2");
      assertThat(query(c, "SELECT string_agg(step_name, ',') FROM queue.workflow_step"))
          .isEqualTo("charge");
    }
  }

  /** Continues the held run with input 2 and no held step; answers the successor's id. */
  private static long continueBare(Connection c, WorkflowSql.Held h) throws SQLException {
    String ok =
        query(
            c,
            "SELECT outcome || ':' || continued_to FROM queue.workflow_continue_as_new("
                + h.run()
                + ", "
                + h.msg()
                + ", "
                + h.receipt()
                + ", '2')");
    assertThat(ok).startsWith("ok:");
    return Long.parseLong(ok.substring(3));
  }

  @Test
  void aRepeatedChildStartAfterTheChildContinuedAnswersTheChainsFirstRunAndItsEndReachesTheParent()
      throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      WorkflowSql.Held parent = WorkflowSql.startAndPoll(c, "par");
      String start =
          "SELECT run_id || ' ' || status || ' ' || created"
              + " FROM queue.workflow_start_child("
              + parent.run()
              + ", 'kid', 'kid', '1')";
      String first = query(c, start);
      long child = Long.parseLong(first.split(" ")[0]);
      assertThat(first).isEqualTo(child + " running true");
      long successor = continueBare(c, WorkflowSql.poll(c, "kid"));

      // The parent replays its child step: it gets the id the chain's end is reported under.
      assertThat(query(c, start)).isEqualTo(child + " running false");

      // The chain ends (a cancel sent to the first run reaches the running last one).
      assertThat(
              query(
                  c, "SELECT cancelled || ' ' || status FROM queue.workflow_cancel(" + child + ")"))
          .isEqualTo("true cancelled");
      assertThat(
              query(c, "SELECT status::text FROM queue.workflow_run WHERE run_id = " + successor))
          .isEqualTo("cancelled");
      assertThat(
              query(
                  c,
                  "SELECT string_agg(event, ',') FROM queue.workflow_signal WHERE run_id = "
                      + parent.run()))
          .isEqualTo("__child." + child);
      assertThat(query(c, start)).isEqualTo(child + " cancelled false");
    }
  }

  @Test
  void aPausedRunWithADeadlineThatContinuesLeavesAPausedSuccessorWithTheSameDeadline()
      throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(
          c,
          "SELECT queue.workflow_start('can', '1'::jsonb, NULL, NULL, NULL, 365, NULL,"
              + " '{\"deadlineMs\": 3600000}')");
      WorkflowSql.Held h = WorkflowSql.poll(c, "can");
      exec(c, "SELECT queue.workflow_run_pause(" + h.run() + ", true)");
      long successor = continueBare(c, h);

      assertThat(
              query(
                  c,
                  "SELECT (s.paused_at IS NOT NULL) || ' ' || (s.deadline_at = p.deadline_at)"
                      + " FROM queue.workflow_run s, queue.workflow_run p WHERE s.run_id = "
                      + successor
                      + " AND p.run_id = "
                      + h.run()))
          .isEqualTo("true true");
      // The poll parks the paused successor's task instead of handing it out.
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_poll('can', '{1}', 1, 60)"))
          .isEqualTo("0");
      exec(c, "SELECT queue.workflow_run_pause(" + successor + ", false)");
      assertThat(WorkflowSql.poll(c, "can").run()).isEqualTo(successor);
    }
  }

  @Test
  void bufferedSignalsMoveToTheSuccessorAndSignalsToAnEndedMemberReachTheRunningOne()
      throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      WorkflowSql.Held h = WorkflowSql.startAndPoll(c, "can");
      assertThat(
              query(
                  c,
                  "SELECT outcome FROM queue.workflow_signal(" + h.run() + ", 'early', '1', 'k1')"))
          .isEqualTo("buffered");
      long successor = continueBare(c, h);
      assertThat(
              query(c, "SELECT string_agg(run_id || ':' || event, ',') FROM queue.workflow_signal"))
          .isEqualTo(successor + ":early");

      // Sent to the ended run, a signal reaches the chain's running run; its key is still known.
      assertThat(
              query(
                  c,
                  "SELECT outcome || ' ' || workflow_name FROM queue.workflow_signal("
                      + h.run()
                      + ", 'late', '2')"))
          .isEqualTo("buffered can");
      assertThat(
              query(
                  c,
                  "SELECT outcome FROM queue.workflow_signal(" + h.run() + ", 'early', '1', 'k1')"))
          .isEqualTo("duplicate");
      assertThat(
              query(
                  c,
                  "SELECT string_agg(event, ',' ORDER BY signal_id) FROM queue.workflow_signal"
                      + " WHERE run_id = "
                      + successor))
          .isEqualTo("early,late");
    }
  }
}
