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
 * A workflow's queue belongs to the engine: the queue functions a user could call to take from,
 * empty, drop or reconfigure it raise WF001 and change nothing.
 */
class WorkflowQueueRefusesQueueFunctionsTest {

  @Test
  void purgeDropReceiveFifoRedriveAndOtherSettingsRaiseWf001AndChangeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String run = query(c, "SELECT run_id FROM queue.workflow_start('own', '1'::jsonb)");
      String before = state(c);
      for (String call :
          new String[] {
            "SELECT queue.purge_queue('__wf_own')",
            "SELECT queue.drop_queue('__wf_own')",
            "SELECT * FROM queue.receive_fifo('__wf_own')",
            "SELECT queue.redrive_dead_letters('__wf_own')",
            "SELECT queue.create_queue('__wf_own', false)",
            "SELECT queue.create_queue('__wf_own', true, 30)",
            "SELECT queue.create_queue('__wf_own', true, 60, 5)"
          }) {
        assertThatThrownBy(() -> exec(c, call))
            .as(call)
            .isInstanceOfSatisfying(
                SQLException.class,
                e -> {
                  assertThat(e.getSQLState()).isEqualTo("WF001");
                  assertThat(e.getMessage())
                      .contains("queue \"__wf_own\" belongs to workflow \"own\"");
                });
      }
      assertThat(state(c)).isEqualTo(before).contains(run + " running");
    }
  }

  @Test
  void aQueueWithTheEnginesSettingsIsTheOnlyWorkflowQueueCreateQueueMakes() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      assertThatThrownBy(() -> exec(c, "SELECT queue.create_queue('__wf_early', false)"))
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("WF001"));
      assertThat(query(c, "SELECT count(*) FROM queue.queue_meta")).isEqualTo("0");

      // What workflow_start itself calls: the same queue it would make.
      assertThat(query(c, "SELECT queue.create_queue('__wf_early', true, 60, NULL)"))
          .isEqualTo("t");
      query(c, "SELECT run_id FROM queue.workflow_start('early', '1'::jsonb)");
      assertThat(query(c, "SELECT count(*) FROM queue.q___wf_early")).isEqualTo("1");
    }
  }

  /** The queue's settings, its messages and the runs, as one string. */
  private static String state(Connection c) throws SQLException {
    return query(
        c,
        "SELECT (SELECT string_agg(queue_name || ' ' || fifo || ' ' || visibility_timeout, ';')"
            + " FROM queue.queue_meta)"
            + " || ' | ' || (SELECT string_agg(msg_id || ' ' || group_id || ' ' || vt, ';')"
            + " FROM queue.q___wf_own)"
            + " || ' | ' || (SELECT string_agg(run_id || ' ' || status, ';')"
            + " FROM queue.workflow_run)");
  }
}
