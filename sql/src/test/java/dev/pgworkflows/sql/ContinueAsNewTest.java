package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * workflow_continue_as_new is one transaction: when anything in it fails after the successor was
 * started, neither the successor nor the run's end nor the held step remain, and the lease still
 * holds for a second try.
 */
@Timeout(120)
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
}
