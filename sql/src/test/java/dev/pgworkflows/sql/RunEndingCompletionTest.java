package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.Notifications;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * workflow_complete_ended: a completion that ends its run, answered with the run's version, times
 * and trace; a completion that does not go through is answered with its outcome alone and changes
 * nothing; one without a result, with a result without a status, or with a failure and no error, is
 * refused.
 */
class RunEndingCompletionTest {

  private static String end(String run, String msg, String receipt, String result) {
    return "SELECT concat_ws(' ', outcome, version, started_at IS NOT NULL,"
        + " completed_at >= started_at, trace_context)"
        + " FROM queue.workflow_complete_ended("
        + run
        + ", "
        + msg
        + ", "
        + receipt
        + ", 'last', 'run', '5', NULL, now(), "
        + result
        + ", 60)";
  }

  @Test
  void aRunsEndIsAnsweredWithWhatItsSpanAndMetricsNeed() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      query(c, "SELECT queue.workflow_register_versions('ce', ARRAY[3])::text");
      String run =
          query(
              c,
              "SELECT run_id FROM queue.workflow_start('ce', '1', NULL, NULL, NULL, 365, 't-r-p')");
      String[] task =
          query(c, "SELECT msg_id || ' ' || receipt FROM queue.workflow_poll('ce', '{3}', 1, 60)")
              .split(" ");
      String ok = "'{\"status\": \"completed\", \"output\": 5}'";

      assertThat(query(c, end(run, task[0], "1", ok)))
          .as("nothing about the run")
          .isEqualTo("stale f");
      assertThat(query(c, "SELECT status::text FROM queue.workflow_run WHERE run_id = " + run))
          .isEqualTo("running");
      assertThatThrownBy(() -> query(c, end(run, task[0], task[1], "NULL")))
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("22023");

      assertThatThrownBy(() -> query(c, end(run, task[0], task[1], "'{\"output\": 5}'")))
          .as("a result without a status")
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("22023");
      assertThatThrownBy(() -> query(c, end(run, task[0], task[1], "'{\"status\": \"failed\"}'")))
          .as("a failed result without an error")
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("22023");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step")).isEqualTo("0");

      assertThat(query(c, end(run, task[0], task[1], ok))).isEqualTo("ok 3 t t t-r-p");
      assertThat(
              query(
                  c,
                  "SELECT concat_ws(' ', status, output, (SELECT count(*) FROM"
                      + " queue.workflow_step s WHERE s.run_id = r.run_id))"
                      + " FROM queue.workflow_run r WHERE run_id = "
                      + run))
          .isEqualTo("completed 5 1");
      assertThat(query(c, "SELECT count(*) FROM queue.q___wf_ce")).isEqualTo("0");
      assertThat(query(c, end(run, task[0], task[1], ok)))
          .as("the same end again")
          .isEqualTo("not_running f");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step")).isEqualTo("1");
    }
  }

  @Test
  void theGroupsNextMessageBecomesItsHeadWhenTheRunEnds() throws SQLException {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Connection listener = db.connect()) {
      WorkflowSql.Held h = WorkflowSql.startAndPoll(c, "cg");
      String run = String.valueOf(h.run());
      String later =
          query(
              c,
              "SELECT queue.enqueue('__wf_cg', '{\"reason\": \"signal\"}'::jsonb, NULL, 0, '"
                  + run
                  + "')");
      assertThat(query(c, "SELECT head FROM queue.q___wf_cg WHERE msg_id = " + later))
          .as("behind the run's message")
          .isEqualTo("f");
      Notifications wakeups = Notifications.listen(listener);

      assertThat(
              query(
                  c,
                  end(
                      run,
                      String.valueOf(h.msg()),
                      String.valueOf(h.receipt()),
                      "'{\"status\": \"completed\"}'")))
          .startsWith("ok ");
      assertThat(query(c, "SELECT string_agg(msg_id || ' ' || head, ',') FROM queue.q___wf_cg"))
          .as("the run's message gone, the later one the group's head")
          .isEqualTo(later + " true");
      assertThat(wakeups.heard()).isEqualTo(List.of("__wf_cg"));
    }
  }
}
