package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * A worker that keeps its runs' journals receives only the rows it lacks: workflow_poll withholds a
 * journal longer than the worker's p_journal_max, and workflow_journal_after answers the rows after
 * the last one the worker holds, or the whole journal when that row is no longer there as it was.
 */
class JournalAfterTest {

  /** Journals steps a1..a{n} (output i) under the lease {@code h}. */
  private static void journalSteps(Connection c, Held h, int from, int to) throws SQLException {
    StringBuilder steps = new StringBuilder("[");
    for (int i = from; i <= to; i++) {
      steps.append(i == from ? "" : ", ");
      steps.append("{\"name\": \"a").append(i).append("\", \"kind\": \"run\", \"output\": ");
      steps.append(i).append("}");
    }
    steps.append("]");
    assertThat(WorkflowSql.journalSteps(c, h, steps.toString())).startsWith("ok:");
  }

  private static String after(Connection c, long run, String seq, String completedAt)
      throws SQLException {
    return query(
        c,
        "SELECT whole || ' ' || coalesce((SELECT string_agg(e ->> 'name', ',')"
            + " FROM jsonb_array_elements(journal) e), '-') || ' ' || coalesce(last_seq::text, '-')"
            + " FROM queue.workflow_journal_after("
            + run
            + ", "
            + seq
            + ", "
            + completedAt
            + ")");
  }

  @Test
  void theRowsAfterTheOneHeldComeAloneAndAnyOtherRowSendsTheWholeJournal() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "long");
      assertThat(after(c, h.run(), "NULL", "NULL")).isEqualTo("true - -");
      journalSteps(c, h, 1, 5);
      String third =
          "(SELECT completed_at FROM queue.workflow_step WHERE run_id = "
              + h.run()
              + " AND seq = 3)";

      assertThat(after(c, h.run(), "NULL", "NULL")).isEqualTo("true a1,a2,a3,a4,a5 5");
      assertThat(after(c, h.run(), "3", third)).isEqualTo("false a4,a5 5");
      assertThat(
              after(
                  c,
                  h.run(),
                  "5",
                  "(SELECT completed_at FROM queue.workflow_step WHERE run_id = "
                      + h.run()
                      + " AND seq = 5)"))
          .isEqualTo("false - 5");
      // The row held was written at another time (a restart set it aside and wrote another).
      assertThat(after(c, h.run(), "3", third + " - interval '1 microsecond'"))
          .isEqualTo("true a1,a2,a3,a4,a5 5");
      // A row past the journal's end.
      assertThat(after(c, h.run(), "9", third)).isEqualTo("true a1,a2,a3,a4,a5 5");
    }
  }

  @Test
  void aPollWithholdsOnlyAJournalLongerThanItsMax() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "withheld");
      journalSteps(c, h, 1, 5);
      for (String max : new String[] {"4", "5", "NULL"}) {
        exec(
            c,
            "UPDATE queue.q___wf_withheld SET vt = clock_timestamp() - interval '1 second'"
                + " WHERE msg_id = "
                + h.msg());
        assertThat(
                rows(
                    c,
                    "SELECT coalesce(jsonb_array_length(journal)::text, 'withheld')"
                        + " FROM queue.workflow_poll('withheld', '{1}', 1, 60, "
                        + max
                        + ")"))
            .as("journal max " + max)
            .containsExactly(max.equals("4") ? "withheld" : "5");
      }
      // The journal read by other callers is whole, and from a row on when asked.
      assertThat(query(c, "SELECT jsonb_array_length(queue.workflow_journal(" + h.run() + "))"))
          .isEqualTo("5");
      assertThat(query(c, "SELECT jsonb_array_length(queue.workflow_journal(" + h.run() + ", 2))"))
          .isEqualTo("3");
    }
  }
}
