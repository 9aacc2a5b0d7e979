package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * Bulk operations: a job acts on the runs its query selected, a page per step, each run once,
 * newest first; runs made after it are not its; a run the action does not fit is skipped; bad jobs
 * are refused naming the field.
 */
class BulkOperationsTest {
  private static final String ORDERS =
      "{\"field\": \"workflow\", \"op\": \"=\", \"value\": \"order\"}";

  private static void start(Connection c, int n) throws SQLException {
    for (int i = 0; i < n; i++) {
      exec(c, "SELECT * FROM queue.workflow_start('order', '{}')");
    }
  }

  private static long create(Connection c, String action, String params, int rate, boolean confirm)
      throws SQLException {
    return Long.parseLong(
        query(
            c,
            "SELECT batch_id FROM queue.bulk_create('"
                + action
                + "', 'workflow = ''order''', '"
                + ORDERS
                + "', '"
                + params
                + "', "
                + rate
                + ", "
                + confirm
                + ", 'ops')"));
  }

  private static String step(Connection c, long batch, int limit) throws SQLException {
    return query(
        c, "SELECT acted || ' ' || status FROM queue.bulk_step(" + batch + ", " + limit + ")");
  }

  @Test
  void aCancelJobCancelsEachRunOncePageByPageAndLeavesLaterRunsAlone() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      start(c, 25);
      long batch = create(c, "cancel", "{}", 10, false);
      assertThat(query(c, "SELECT selected FROM queue.bulk_operation WHERE batch_id = " + batch))
          .isEqualTo("25");
      start(c, 3);
      assertThat(step(c, batch, 10)).isEqualTo("10 running");
      assertThat(
              rows(
                  c,
                  "SELECT run_id FROM queue.bulk_runs(" + batch + ") ORDER BY run_id DESC LIMIT 1"))
          .containsExactly("25");
      assertThat(step(c, batch, 10)).isEqualTo("10 running");
      assertThat(step(c, batch, 10)).isEqualTo("5 completed");
      assertThat(step(c, batch, 10)).isEqualTo("0 completed");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run WHERE status = 'cancelled'"))
          .isEqualTo("25");
      assertThat(
              query(
                  c,
                  "SELECT string_agg(run_id::text, ',') FROM queue.workflow_run WHERE status = 'running'"))
          .isEqualTo("26,27,28");
      assertThat(
              query(c, "SELECT done || '/' || skipped || '/' || failed FROM queue.bulk_operation"))
          .isEqualTo("25/0/0");

      long again = create(c, "cancel", "{}", 100, false);
      assertThat(step(c, again, 100)).isEqualTo("28 completed");
      assertThat(
              query(
                  c,
                  "SELECT done || '/' || skipped FROM queue.bulk_operation WHERE batch_id = "
                      + again))
          .isEqualTo("3/25");
      assertThat(query(c, "SELECT detail FROM queue.bulk_runs(" + again + ", 'skipped') LIMIT 1"))
          .isEqualTo("the run is cancelled");
    }
  }

  @Test
  void signalPauseResumeAndRestartFromTheFailedStep() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      start(c, 2);
      long signal = create(c, "signal", "{\"event\": \"go\", \"payload\": {\"n\": 1}}", 10, false);
      assertThat(step(c, signal, 10)).isEqualTo("2 completed");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_signal WHERE event = 'go'"))
          .isEqualTo("2");

      long pause = create(c, "pause", "{}", 10, false);
      assertThat(step(c, pause, 10)).isEqualTo("2 completed");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run WHERE paused_at IS NOT NULL"))
          .isEqualTo("2");
      long resume = create(c, "resume", "{}", 10, false);
      assertThat(step(c, resume, 10)).isEqualTo("2 completed");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run WHERE paused_at IS NOT NULL"))
          .isEqualTo("0");

      exec(
          c,
          "INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, started_at)"
              + " VALUES (1, 'reserve', 1, 'run', '1', now())");
      exec(
          c,
          "INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, error, started_at)"
              + " VALUES (1, 'charge', 2, 'run', '{\"type\": \"Declined\"}', now())");
      exec(
          c,
          "UPDATE queue.workflow_run SET status = 'failed', error = '{\"type\": \"Declined\"}',"
              + " completed_at = now(), current_msg_id = NULL WHERE run_id IN (1, 2)");
      long restart = create(c, "restart", "{}", 10, false);
      assertThat(step(c, restart, 10)).isEqualTo("2 completed");
      assertThat(
              rows(
                  c,
                  "SELECT run_id || ' ' || outcome || ' ' || detail FROM queue.bulk_runs("
                      + restart
                      + ")"))
          .containsExactly("2 skipped the run has no failed step", "1 done from step charge");
      assertThat(query(c, "SELECT status FROM queue.workflow_run WHERE run_id = 1"))
          .isEqualTo("running");
      assertThat(
              query(
                  c, "SELECT string_agg(step_name, ',') FROM queue.workflow_step WHERE run_id = 1"))
          .isEqualTo("reserve");
    }
  }

  @Test
  void badJobsAreRefusedNamingTheFieldAndMakeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(
          c,
          "INSERT INTO queue.workflow_run (workflow_name, workflow_version, retention_days)"
              + " SELECT 'order', 1, 30 FROM generate_series(1, 1001)");
      assertThatThrownBy(() -> create(c, "cancel", "{}", 100, false))
          .hasMessageContaining("confirm: the query selects 1001 runs");
      assertThatThrownBy(() -> create(c, "delete", "{}", 100, true))
          .hasMessageContaining("action must be cancel, signal, pause, resume or restart");
      assertThatThrownBy(() -> create(c, "cancel", "{}", 0, true))
          .hasMessageContaining("ratePerSecond must be between 1 and 1000");
      assertThatThrownBy(() -> create(c, "signal", "{}", 10, true))
          .hasMessageContaining("event must be 1 to 128 characters");
      assertThatThrownBy(() -> create(c, "cancel", "{\"fromStep\": \"x\"}", 10, true))
          .hasMessageContaining("fromStep goes with the action restart only");
      assertThat(query(c, "SELECT count(*) FROM queue.bulk_operation")).isEqualTo("0");
      assertThat(create(c, "cancel", "{}", 1000, true)).isPositive();
    }
  }
}
