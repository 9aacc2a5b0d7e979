package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * workflow_start_batch: a batch without idempotency keys is written set-wise and gives each run
 * exactly what a single start would (version, retention, input, trace, a first message that heads
 * the run's group), answered in input order; a bad item fails the batch and writes nothing; a batch
 * with a key goes start by start.
 */
class StartBatchTest {

  @Test
  void aBatchWithoutKeysGivesEachRunWhatASingleStartWould() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      rows(c, "SELECT queue.workflow_register_versions('sb', ARRAY[1, 3])::text");
      List<String> answers =
          rows(
              c,
              "SELECT ord || ' ' || run_id || ' ' || status || ' ' || created"
                  + " FROM queue.workflow_start_batch('sb', '["
                  + "{\"input\": {\"n\": 1}},"
                  + "{\"input\": 2, \"version\": 2, \"retentionDays\": 400},"
                  + "{\"retentionDays\": 7, \"traceContext\": \"t-s-p\"}]', 365)");
      assertThat(answers).hasSize(3);
      long first = Long.parseLong(answers.get(0).split(" ")[1]);
      assertThat(answers)
          .containsExactly(
              "1 " + first + " running true",
              "2 " + (first + 1) + " running true",
              "3 " + (first + 2) + " running true");
      assertThat(
              rows(
                  c,
                  "SELECT concat_ws(' ', r.run_id - "
                      + first
                      + ", r.workflow_version,"
                      + " r.retention_days, r.input, coalesce(r.trace_context, '-'),"
                      + " m.group_id = r.run_id::text, m.head, m.body ->> 'v', m.body ->> 'reason',"
                      + " m.vt <= now())"
                      + " FROM queue.workflow_run r JOIN queue.q___wf_sb m"
                      + " ON m.msg_id = r.current_msg_id ORDER BY r.run_id"))
          .containsExactly(
              "0 3 30 {\"n\": 1} - t t 3 start t",
              "1 2 365 2 - t t 2 start t",
              "2 3 7 null t-s-p t t 3 start t");
      // The runs are there to be polled, in order.
      assertThat(
              rows(
                  c,
                  "SELECT run_id - "
                      + first
                      + " FROM queue.workflow_poll('sb', ARRAY[2, 3], 10, 60) ORDER BY run_id"))
          .containsExactly("0", "1", "2");
    }
  }

  @Test
  void aBadItemFailsTheBatchAndWritesNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      for (String bad :
          new String[] {
            "[{\"input\": 1}, {\"input\": 2, \"version\": 0}]",
            "[{\"input\": 1}, {\"input\": 2, \"retentionDays\": 0}]",
            "[{\"input\": 1}, {\"version\": \"one\"}]",
            "[{\"input\": 1}, 7]"
          }) {
        assertThatThrownBy(
                () -> rows(c, "SELECT run_id FROM queue.workflow_start_batch('sb', '" + bad + "')"))
            .as(bad)
            .isInstanceOf(SQLException.class)
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
      }
      assertThat(rows(c, "SELECT count(*) FROM queue.workflow_run")).containsExactly("0");
    }
  }

  @Test
  void aBatchWithAKeyGoesStartByStart() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      List<String> answers =
          rows(
              c,
              "SELECT created::text FROM queue.workflow_start_batch('sb', '["
                  + "{\"input\": 1, \"idempotencyKey\": \"k\"},"
                  + "{\"input\": 2},"
                  + "{\"input\": 3, \"idempotencyKey\": \"k\"}]') ORDER BY ord");
      assertThat(answers).containsExactly("true", "true", "false");
      assertThat(rows(c, "SELECT count(*) FROM queue.workflow_run")).containsExactly("2");
      assertThat(rows(c, "SELECT count(*) FROM queue.q___wf_sb")).containsExactly("2");
    }
  }
}
