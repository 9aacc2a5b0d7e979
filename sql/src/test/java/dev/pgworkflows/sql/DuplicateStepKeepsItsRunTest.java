package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.inline;
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
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A completion, under a lease that still holds, of a step the run has journaled already: answered
 * {@code duplicate}, journaling nothing and sending the run nowhere, and the run keeps its task
 * (the same message, still leased to the same receipt), so the run goes on: by the holder, or by
 * whoever polls once the lease runs out. Through every completion path: the general one, the
 * run-ending one, a batch's slow and finishing items, and an inline step's retry that finds the
 * workflow paused.
 */
class DuplicateStepKeepsItsRunTest {

  private static final String SLEEP = "'{\"delayMs\": 0}'";

  /** The run's current message, and whether the queue still has it. */
  private static String task(Connection c, String workflow, long run) throws SQLException {
    return query(
        c,
        "SELECT current_msg_id || ' ' || EXISTS (SELECT 1 FROM queue.\"q___wf_"
            + workflow
            + "\" q WHERE q.msg_id = r.current_msg_id)"
            + " FROM queue.workflow_run r WHERE run_id = "
            + run);
  }

  private static List<String> journal(Connection c, long run) throws SQLException {
    return rows(
        c, "SELECT step_name FROM queue.workflow_step WHERE run_id = " + run + " ORDER BY seq");
  }

  @Test
  void aRepeatedStepUnderAValidLeaseLeavesTheRunItsTask() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held first = startAndPoll(c, "dup");
      assertThat(complete(c, first, "a", SLEEP, "NULL", "60")).isEqualTo("ok:");
      Held second = poll(c, "dup");

      assertThat(complete(c, second, "a", SLEEP, "NULL", "60")).isEqualTo("duplicate:");
      assertThat(task(c, "dup", second.run()))
          .as("the run's task is the message just handed out, still on the queue")
          .isEqualTo(second.msg() + " true");
      assertThat(journal(c, second.run())).containsExactly("a");

      // The holder goes on under the same lease.
      assertThat(complete(c, second, "b", SLEEP, "NULL", "60")).isEqualTo("ok:");
      Held third = poll(c, "dup");
      assertThat(third.run()).isEqualTo(second.run());
      assertThat(journal(c, third.run())).containsExactly("a", "b");
    }
  }

  @Test
  void aRepeatedStepInARunEndingCompletionLeavesTheRunRunning() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held first = startAndPoll(c, "dupend");
      assertThat(complete(c, first, "a", SLEEP, "NULL", "60")).isEqualTo("ok:");
      Held second = poll(c, "dupend");
      String end =
          "SELECT outcome FROM queue.workflow_complete_ended("
              + second.run()
              + ", "
              + second.msg()
              + ", "
              + second.receipt()
              + ", '%s', 'run', '1', NULL, NULL, '{\"status\": \"completed\", \"output\": 1}', 60)";

      assertThat(query(c, String.format(end, "a"))).isEqualTo("duplicate");
      assertThat(
              query(
                  c, "SELECT status::text FROM queue.workflow_run WHERE run_id = " + second.run()))
          .isEqualTo("running");
      assertThat(task(c, "dupend", second.run())).isEqualTo(second.msg() + " true");

      assertThat(query(c, String.format(end, "b"))).isEqualTo("ok");
      assertThat(journal(c, second.run())).containsExactly("a", "b");
    }
  }

  private static String batch(Connection c, String workflow, String items) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT outcome FROM queue.workflow_complete_batch(?, ?::jsonb)")) {
      ps.setString(1, workflow);
      ps.setString(2, items);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1);
      }
    }
  }

  private static String item(Held h, String step, String tail) {
    return String.format(
        "[{\"run_id\": %d, \"msg_id\": %d, \"receipt\": %d, \"step_name\": \"%s\","
            + " \"step_kind\": \"run\", \"output\": 1, %s}]",
        h.run(), h.msg(), h.receipt(), step, tail);
  }

  @Test
  void aRepeatedStepInABatchLeavesTheRunItsTask() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held first = startAndPoll(c, "dupb");
      assertThat(batch(c, "dupb", item(first, "a", "\"next\": {\"delayMs\": 0}"))).isEqualTo("ok");
      Held second = poll(c, "dupb");
      String finish = "\"result\": {\"status\": \"completed\", \"output\": 1}";

      assertThat(batch(c, "dupb", item(second, "a", "\"next\": {\"delayMs\": 0}")))
          .as("an item that sends the run on")
          .isEqualTo("duplicate");
      assertThat(task(c, "dupb", second.run())).isEqualTo(second.msg() + " true");
      assertThat(batch(c, "dupb", item(second, "a", finish)))
          .as("an item that ends the run")
          .isEqualTo("duplicate");
      assertThat(
              query(
                  c, "SELECT status::text FROM queue.workflow_run WHERE run_id = " + second.run()))
          .isEqualTo("running");
      assertThat(task(c, "dupb", second.run())).isEqualTo(second.msg() + " true");

      assertThat(batch(c, "dupb", item(second, "b", finish))).isEqualTo("ok");
      assertThat(journal(c, second.run())).containsExactly("a", "b");
    }
  }

  /**
   * A worker's retry of an inline step whose first attempt committed (its answer lost), with the
   * workflow paused in between: the retry takes the general path and finds its step journaled.
   */
  @Test
  void aRetriedInlineStepThatFindsTheWorkflowPausedLeavesTheRunItsTask() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "dupi");
      String answer = inline(c, h, "a");
      assertThat(answer).startsWith("ok:");
      Held kept = new Held(h.run(), h.msg(), Long.parseLong(answer.substring(3)));
      exec(c, "SELECT * FROM queue.workflow_pause_set('dupi', true)");

      assertThat(inline(c, kept, "a")).isEqualTo("duplicate:");
      assertThat(task(c, "dupi", h.run())).isEqualTo(h.msg() + " true");
      assertThat(journal(c, h.run())).containsExactly("a");

      exec(c, "SELECT * FROM queue.workflow_pause_set('dupi', false)");
      // The lease runs out (handed back at once here), and the run is taken up again.
      assertThat(
              query(
                  c,
                  "SELECT queue.workflow_retry("
                      + h.run()
                      + ", "
                      + h.msg()
                      + ", "
                      + kept.receipt()
                      + ", 0)"))
          .isEqualTo("ok");
      Held again = poll(c, "dupi");
      assertThat(again.run()).isEqualTo(h.run());
      assertThat(
              complete(c, again, "b", "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60"))
          .isEqualTo("ok:");
      assertThat(journal(c, h.run())).containsExactly("a", "b");
    }
  }
}
