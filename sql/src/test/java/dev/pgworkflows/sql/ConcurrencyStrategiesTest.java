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
 * What a workflow's concurrency strategy makes of a keyed start: queue answers started or queued,
 * cancel_in_progress cancels the key's older runs, cancel_newest cancels the new run of a full key,
 * skip makes no run and answers the key's newest; limitFrom reads the limit from the input.
 */
class ConcurrencyStrategiesTest {

  /** run_id, status, created, admission and cancelled runs of a keyed start, space-separated. */
  private static String start(Connection c, String wf, String input, String key)
      throws SQLException {
    return query(
        c,
        "SELECT concat_ws(' ', run_id, status, created, coalesce(admission, '-'),"
            + " coalesce(cancelled_runs::text, '-')) FROM queue.workflow_start('"
            + wf
            + "', '"
            + input
            + "'::jsonb, NULL, NULL, NULL, 365, NULL, jsonb_build_object('concurrencyKey', '"
            + key
            + "'))");
  }

  private static String run(String answer) {
    return answer.split(" ")[0];
  }

  private static String status(Connection c, String run) throws SQLException {
    return query(c, "SELECT status FROM queue.workflow_run WHERE run_id = " + run);
  }

  @Test
  void queueAnswersStartedUntilTheKeyIsFullThenQueued() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('q', 2)");
      assertThat(start(c, "q", "1", "a")).endsWith("running t started -");
      assertThat(start(c, "q", "2", "a")).endsWith("running t started -");
      assertThat(start(c, "q", "3", "a")).endsWith("running t queued -");
      assertThat(start(c, "q", "4", "b")).endsWith("running t started -");
      // Without a limit a keyed start says nothing of admission.
      assertThat(start(c, "free", "1", "a")).endsWith("running t - -");
    }
  }

  @Test
  void cancelInProgressCancelsTheKeysOlderRunsBeyondTheLimit() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('cip', 2, 'cancel_in_progress')");
      String a1 = run(start(c, "cip", "1", "a"));
      String a2 = run(start(c, "cip", "2", "a"));
      String other = run(start(c, "cip", "3", "b"));
      String a3 = start(c, "cip", "4", "a");
      assertThat(a3).endsWith("running t started {" + a1 + "}");
      String a4 = start(c, "cip", "5", "a");
      assertThat(a4).endsWith("running t started {" + a2 + "}");
      assertThat(status(c, a1)).isEqualTo("cancelled");
      assertThat(status(c, a2)).isEqualTo("cancelled");
      assertThat(status(c, run(a3))).isEqualTo("running");
      assertThat(status(c, other)).isEqualTo("running");
    }
  }

  @Test
  void cancelNewestCancelsANewRunOfAFullKey() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('cn', 1, 'cancel_newest')");
      String first = run(start(c, "cn", "1", "a"));
      String second = start(c, "cn", "2", "a");
      assertThat(second).endsWith("cancelled t cancelled -");
      assertThat(status(c, run(second))).isEqualTo("cancelled");
      assertThat(status(c, first)).isEqualTo("running");
      // Once the first run ends, the key takes a new one.
      exec(c, "SELECT * FROM queue.workflow_cancel(" + first + ")");
      assertThat(start(c, "cn", "3", "a")).endsWith("running t started -");
    }
  }

  @Test
  void skipMakesNoRunAndAnswersTheKeysNewestRunningRun() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('sk', 1, 'skip')");
      String first = run(start(c, "sk", "1", "a"));
      String before = query(c, "SELECT count(*) FROM queue.workflow_run");
      assertThat(start(c, "sk", "2", "a")).isEqualTo(first + " running f skipped -");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo(before);
      assertThat(start(c, "sk", "3", "b")).endsWith("running t started -");
    }
  }

  @Test
  void limitFromReadsEachRunsLimitFromItsInput() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(
          c,
          "SELECT queue.set_concurrency_limit('plan', 1, 'skip', '$.plan',"
              + " '{\"premium\": 3, \"free\": 1}'::jsonb)");
      String premium = "{\"plan\": \"premium\"}";
      String free = "{\"plan\": \"free\"}";
      assertThat(start(c, "plan", premium, "p")).endsWith("started -");
      assertThat(start(c, "plan", premium, "p")).endsWith("started -");
      assertThat(start(c, "plan", premium, "p")).endsWith("started -");
      assertThat(start(c, "plan", premium, "p")).endsWith("skipped -");
      assertThat(start(c, "plan", free, "f")).endsWith("started -");
      assertThat(start(c, "plan", free, "f")).endsWith("skipped -");
      // A value the map does not name takes the workflow's limit.
      assertThat(start(c, "plan", "{\"plan\": \"trial\"}", "t")).endsWith("started -");
      assertThat(rows(c, "SELECT slot_limit::text FROM queue.workflow_run ORDER BY run_id"))
          .containsExactly("3", "3", "3", "1", "1");
    }
  }

  @Test
  void aLimitFromPathMissingFromTheInputRefusesTheStartAndMakesNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('need', 1, 'queue', '$.plan')");
      assertThatThrownBy(() -> start(c, "need", "{\"tier\": 1}", "k"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("input has no value at $.plan")
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("22023");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("0");
      exec(c, "SELECT queue.set_concurrency_limit('num', 1, 'queue', '$.max')");
      assertThatThrownBy(() -> start(c, "num", "{\"max\": \"many\"}", "k"))
          .hasMessageContaining("input at $.max must be a whole number from 1 to 100000");
    }
  }

  @Test
  void badSettingsAreRefusedNamingTheFieldAndChangeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('bad', 2)");
      assertThatThrownBy(() -> exec(c, "SELECT queue.set_concurrency_limit('bad', 1, 'newest')"))
          .hasMessageContaining("strategy must be one of");
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.set_concurrency_limit('bad', 1, 'queue', '$.[')"))
          .hasMessageContaining("limitFrom is not a JSON path");
      assertThatThrownBy(
              () ->
                  exec(
                      c,
                      "SELECT queue.set_concurrency_limit('bad', 1, 'queue', '$.plan',"
                          + " '{\"a\": 0}')"))
          .hasMessageContaining("limits.a must be a whole number");
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.set_concurrency_limit('bad', 1, 'queue', NULL, '{}')"))
          .hasMessageContaining("limits goes with limitFrom");
      assertThatThrownBy(() -> exec(c, "SELECT queue.set_concurrency_limit('bad', NULL, 'skip')"))
          .hasMessageContaining("limit is required");
      assertThat(
              query(
                  c,
                  "SELECT concat_ws(' ', max_active, strategy, coalesce(limit_from, '-'))"
                      + " FROM queue.concurrency_settings_of('bad')"))
          .isEqualTo("2 queue -");
    }
  }

  @Test
  void aContinuationKeepsItsKeyWhateverTheStrategy() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('chain', 1, 'skip')");
      String first = run(start(c, "chain", "1", "a"));
      WorkflowSql.Held h = WorkflowSql.poll(c, "chain");
      assertThat(h.run()).isEqualTo(Long.parseLong(first));
      String next =
          query(
              c,
              "SELECT o.continued_to FROM queue.workflow_continue_as_new("
                  + h.run()
                  + ", "
                  + h.msg()
                  + ", "
                  + h.receipt()
                  + ", '2'::jsonb) o");
      assertThat(next).isNotNull().isNotEqualTo(first);
      assertThat(status(c, next)).isEqualTo("running");
      assertThat(query(c, "SELECT concurrency_key FROM queue.workflow_run WHERE run_id = " + next))
          .isEqualTo("a");
    }
  }
}
