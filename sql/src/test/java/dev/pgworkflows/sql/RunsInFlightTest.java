package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * workflow_running, which the server's runs-in-flight gauge reads every second it is scraped: each
 * workflow with its running runs, and 0 once none runs rather than dropping out.
 */
class RunsInFlightTest {

  @Test
  void everyWorkflowIsCountedByItsRunningRunsAndStaysAtZeroWhenNoneRuns() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      rows(c, "SELECT run_id::text FROM queue.workflow_start('busy', '1'::jsonb)");
      rows(c, "SELECT run_id::text FROM queue.workflow_start('busy', '2'::jsonb)");
      String idle =
          rows(c, "SELECT run_id::text FROM queue.workflow_start('idle', '1'::jsonb)").get(0);
      rows(c, "SELECT cancelled::text FROM queue.workflow_cancel(" + idle + ")");
      rows(c, "SELECT queue.create_queue('plain', false, 30, NULL)::text");
      assertThat(rows(c, "SELECT workflow_name || ' ' || running FROM queue.workflow_running()"))
          .containsExactly("busy 2", "idle 0");
    }
  }
}
