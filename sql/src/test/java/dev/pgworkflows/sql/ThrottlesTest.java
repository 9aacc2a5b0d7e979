package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A workflow's throttle queues starts beyond its rate (GCRA): a burst goes at once, the rest are
 * due one emission interval apart, for the whole workflow or per key; the blockers say throttled.
 */
class ThrottlesTest {

  private static String start(Connection c, String wf, String fields) throws SQLException {
    return query(
        c,
        "SELECT run_id FROM queue.workflow_start('"
            + wf
            + "', '1'::jsonb, NULL, NULL, NULL, 365, NULL, "
            + fields
            + ")");
  }

  /** Seconds after the first run's first task each run's first task is due, rounded. */
  private static List<String> dueOffsets(Connection c, String wf) throws SQLException {
    return rows(
        c,
        "SELECT round(extract(epoch FROM q.vt - min(q.vt) OVER ()))::text FROM queue.q___wf_"
            + wf
            + " q ORDER BY q.msg_id");
  }

  @Test
  void aBurstGoesAtOnceAndTheRestOneIntervalApart() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_throttle('mail', 6, 60000, 2)"); // one per 10 s, two at once
      for (int i = 0; i < 5; i++) {
        start(c, "mail", "NULL");
      }
      assertThat(dueOffsets(c, "mail")).containsExactly("0", "0", "10", "20", "30");
      String third =
          query(c, "SELECT run_id FROM queue.workflow_run ORDER BY run_id OFFSET 2 LIMIT 1");
      String blockers = query(c, "SELECT queue.workflow_blockers('mail', " + third + ")::text");
      assertThat(blockers).contains("\"kind\": \"throttled\"").contains("\"until\"");
      assertThat(
              query(c, "SELECT count(*) FROM queue.workflow_run WHERE throttled_until IS NOT NULL"))
          .isEqualTo("3");
    }
  }

  @Test
  void aPerKeyThrottleQueuesEachKeyOnItsOwn() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_throttle('sync', 1, 60000, 1, true)");
      start(c, "sync", "'{\"concurrencyKey\": \"a\"}'");
      start(c, "sync", "'{\"concurrencyKey\": \"b\"}'");
      start(c, "sync", "'{\"concurrencyKey\": \"a\"}'");
      assertThat(dueOffsets(c, "sync")).containsExactly("0", "0", "60");
    }
  }

  @Test
  void batchAndHandedStartsAreThrottledToo() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_throttle('bulk', 1, 1000, 1)");
      exec(
          c,
          "SELECT * FROM queue.workflow_start_batch('bulk', '[{\"input\": 1}, {\"input\": 2}]')");
      assertThat(
              rows(
                  c,
                  "SELECT (msg_id IS NOT NULL)::text FROM queue.workflow_start_leased('bulk',"
                      + " '[{\"input\": 3}]', '{1}', 1, 30)"))
          .containsExactly("false");
      assertThat(dueOffsets(c, "bulk")).containsExactly("0", "1", "2");
    }
  }

  @Test
  void badThrottlesAreRefusedNamingTheFieldAndChangeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_throttle('kept', 10, 1000, 3)");
      assertThatThrownBy(() -> exec(c, "SELECT queue.set_throttle('kept', 0, 1000)"))
          .hasMessageContaining("limit");
      assertThatThrownBy(() -> exec(c, "SELECT queue.set_throttle('kept', 1, NULL)"))
          .hasMessageContaining("periodMs is required");
      assertThatThrownBy(() -> exec(c, "SELECT queue.set_throttle('kept', 1, 1000, 0)"))
          .hasMessageContaining("burst");
      assertThat(
              query(
                  c,
                  "SELECT concat_ws(' ', max_starts, period_ms, burst) FROM queue.throttle_of('kept')"))
          .isEqualTo("10 1000 3");
      exec(c, "SELECT queue.set_throttle('kept', NULL, NULL)");
      assertThat(query(c, "SELECT count(*) FROM queue.throttle_of('kept')")).isEqualTo("0");
    }
  }
}
