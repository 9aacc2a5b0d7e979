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
 * The run and journal tables refuse a row that breaks one of their rules, whoever writes it: with
 * check_violation, a message naming the rule, and nothing changed. Each rule is broken once here,
 * by hand, on rows the workflow functions wrote correctly.
 */
class RowRulesTest {

  private static void refused(Connection c, String sql, String rule) {
    assertThatThrownBy(() -> exec(c, sql))
        .as(sql)
        .isInstanceOf(SQLException.class)
        .satisfies(
            e -> {
              assertThat(((SQLException) e).getSQLState()).isEqualTo("23514");
              assertThat(e.getMessage()).contains(rule);
            });
  }

  @Test
  void aRunRowThatBreaksARuleIsRefusedAndNamed() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String run = query(c, "SELECT run_id FROM queue.workflow_start('rr', '1'::jsonb)");
      String set = "UPDATE queue.workflow_run SET ";
      String where = " WHERE run_id = " + run;

      refused(c, set + "workflow_name = 'Bad Name'" + where, "workflow_name must be");
      refused(c, set + "workflow_version = 0" + where, "workflow_version must be");
      refused(c, set + "idempotency_key = ''" + where, "idempotency_key must be");
      refused(c, set + "retention_days = 0" + where, "retention_days must be");
      refused(c, set + "trace_context = repeat('x', 129)" + where, "trace_context must be");
      refused(c, set + "completed_at = now()" + where, "completed_at exactly when");
      refused(
          c,
          set + "status = 'cancelled', completed_at = now()" + where,
          "no current message and no wait");
      refused(
          c,
          set + "status = 'failed', completed_at = now(), current_msg_id = NULL" + where,
          "a failed run has an error");
      refused(
          c,
          set
              + "status = 'completed', completed_at = now(), current_msg_id = NULL,"
              + " error = '\"boom\"'"
              + where,
          "a completed run has no error");
      refused(c, set + "wait_step = 'w'" + where, "on a step and an event together");

      assertThat(
              query(
                  c,
                  "SELECT concat_ws(' ', workflow_name, workflow_version, status,"
                      + " idempotency_key IS NULL, retention_days, completed_at IS NULL,"
                      + " current_msg_id IS NOT NULL, wait_step IS NULL, error IS NULL)"
                      + " FROM queue.workflow_run"
                      + where))
          .as("nothing changed")
          .isEqualTo("rr 1 running t 30 t t t t");

      exec(
          c,
          set
              + "status = 'failed', completed_at = now(), current_msg_id = NULL,"
              + " error = '\"boom\"'"
              + where);
      assertThat(query(c, "SELECT status::text FROM queue.workflow_run" + where))
          .as("a row that keeps the rules is written")
          .isEqualTo("failed");
    }
  }

  @Test
  void aJournalRowThatBreaksARuleIsRefusedAndNamed() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String run = query(c, "SELECT run_id FROM queue.workflow_start('rr', '1'::jsonb)");
      String insert =
          "INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, started_at) VALUES ("
              + run
              + ", ";

      refused(c, insert + "'', 1, 'run', now())", "step_name must be");
      refused(c, insert + "repeat('s', 257), 1, 'run', now())", "step_name must be");
      refused(c, insert + "'s', 1, 'walk', now())", "kind must be");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step")).isEqualTo("0");

      exec(c, insert + "'s', 1, 'sleep', now())");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step")).isEqualTo("1");
    }
  }

  @Test
  void theRulesAreOneCheckATable() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      assertThat(
              query(
                  c,
                  "SELECT string_agg(conname, ' ' ORDER BY conname) FROM pg_constraint"
                      + " WHERE contype = 'c' AND conrelid IN"
                      + " ('queue.workflow_run'::regclass, 'queue.workflow_step'::regclass)"))
          .isEqualTo("workflow_run_valid workflow_step_valid");
    }
  }
}
