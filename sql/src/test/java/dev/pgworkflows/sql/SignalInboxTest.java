package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.poll;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static dev.pgworkflows.sql.WorkflowSql.signal;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * Each run keeps the signals it is sent: one that fits the run's wait is delivered at once, any
 * other is buffered and delivered to the first later wait it fits, oldest first, each at most once.
 */
class SignalInboxTest {

  private static String waitFor(Connection c, Held h, String step, String waitJson, Long timeoutMs)
      throws SQLException {
    String next =
        "'{\"wait\": " + waitJson + (timeoutMs == null ? "" : ", \"delayMs\": " + timeoutMs) + "}'";
    return complete(c, h, step, next, "NULL", "60");
  }

  private static String journal(Connection c, long run, String step) throws SQLException {
    return query(
        c,
        "SELECT coalesce(output::text, '') || '|' || timed_out FROM queue.workflow_step WHERE run_id = "
            + run
            + " AND step_name = '"
            + step
            + "'");
  }

  @Test
  void aSignalSentBeforeTheWaitIsBufferedAndDeliveredToIt() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "inbox");
      assertThat(signal(c, h.run(), "paid", "{\"amount\": 5}", null)).isEqualTo("buffered");
      assertThat(
              waitFor(
                  c, h, "load", "{\"step\": \"w\", \"event\": \"paid\", \"match\": {}}", 60_000L))
          .startsWith("ok");
      // Satisfied at once: the wait is journaled and the run is due now, not at the timeout.
      assertThat(journal(c, h.run(), "w")).isEqualTo("{\"amount\": 5}|false");
      assertThat(query(c, "SELECT wait_step IS NULL FROM queue.workflow_run")).isEqualTo("t");
      Held again = poll(c, "inbox");
      assertThat(again.run()).isEqualTo(h.run());
      assertThat(rows(c, "SELECT delivered_to FROM queue.workflow_signals(" + h.run() + ")"))
          .containsExactly("w");
    }
  }

  @Test
  void buffersAreTakenOldestFirstByMatchAndEachOnlyOnce() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "inbox");
      assertThat(signal(c, h.run(), "e", "{\"k\": 1, \"n\": 1}", null)).isEqualTo("buffered");
      assertThat(signal(c, h.run(), "e", "{\"k\": 2, \"n\": 2}", null)).isEqualTo("buffered");
      assertThat(signal(c, h.run(), "e", "{\"k\": 2, \"n\": 3}", null)).isEqualTo("buffered");
      waitFor(c, h, "s1", "{\"step\": \"w1\", \"event\": \"e\", \"match\": {\"k\": 2}}", 60_000L);
      assertThat(journal(c, h.run(), "w1")).isEqualTo("{\"k\": 2, \"n\": 2}|false");
      h = poll(c, "inbox");
      waitFor(c, h, "s2", "{\"step\": \"w2\", \"event\": \"e\", \"match\": {\"k\": 2}}", 60_000L);
      assertThat(journal(c, h.run(), "w2")).isEqualTo("{\"k\": 2, \"n\": 3}|false");
      h = poll(c, "inbox");
      // Nothing left that fits: the third wait waits; the unmatched signal stays buffered.
      waitFor(c, h, "s3", "{\"step\": \"w3\", \"event\": \"e\", \"match\": {\"k\": 2}}", 60_000L);
      assertThat(query(c, "SELECT wait_step FROM queue.workflow_run")).isEqualTo("w3");
      assertThat(
              rows(
                  c,
                  "SELECT payload ->> 'n' FROM queue.workflow_signals("
                      + h.run()
                      + ") WHERE delivered_at IS NULL"))
          .containsExactly("1");
      assertThat(signal(c, h.run(), "e", "{\"k\": 2, \"n\": 4}", null)).isEqualTo("delivered");
      assertThat(journal(c, h.run(), "w3")).isEqualTo("{\"k\": 2, \"n\": 4}|false");
    }
  }

  @Test
  void aRepeatedIdempotencyKeyIsAnsweredAsADuplicateAndStoredOnce() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "inbox");
      assertThat(signal(c, h.run(), "e", "1", "k1")).isEqualTo("buffered");
      assertThat(signal(c, h.run(), "e", "1", "k1")).isEqualTo("duplicate");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_signal")).isEqualTo("1");
    }
  }

  @Test
  void reservedEventNamesAreRefusedAndChangeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "inbox");
      assertThatThrownBy(() -> signal(c, h.run(), "__child.1", "1", null))
          .hasMessageContaining("reserved");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_signal")).isEqualTo("0");
    }
  }

  @Test
  void waitForAnyTakesTheFirstArmThatFires() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "arms");
      String arms =
          "{\"step\": \"w\", \"arms\": [{\"event\": \"a\"}, {\"event\": \"b\", \"match\": {\"ok\":"
              + " true}}]}";
      waitFor(c, h, "s", arms, 60_000L);
      assertThat(signal(c, h.run(), "b", "{\"ok\": false}", null)).isEqualTo("buffered");
      assertThat(signal(c, h.run(), "b", "{\"ok\": true}", null)).isEqualTo("delivered");
      assertThat(journal(c, h.run(), "w"))
          .isEqualTo("{\"fired\": [null, {\"event\": \"b\", \"payload\": {\"ok\": true}}]}|false");
    }
  }

  @Test
  void waitForAllNeedsEveryArmAndATimeoutKeepsWhatFired() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "arms");
      assertThat(signal(c, h.run(), "a", "1", null)).isEqualTo("buffered");
      String all =
          "{\"step\": \"w\", \"all\": true, \"arms\": [{\"event\": \"a\"}, {\"event\": \"b\"}]}";
      waitFor(c, h, "s", all, 60_000L);
      // a came from the inbox; the run still waits for b.
      assertThat(query(c, "SELECT wait_fired::text FROM queue.workflow_run"))
          .isEqualTo("[{\"event\": \"a\", \"payload\": 1}, null]");
      assertThat(signal(c, h.run(), "a", "2", null)).isEqualTo("buffered");
      assertThat(signal(c, h.run(), "b", "3", null)).isEqualTo("delivered");
      assertThat(journal(c, h.run(), "w"))
          .isEqualTo(
              "{\"fired\": [{\"event\": \"a\", \"payload\": 1}, {\"event\": \"b\", \"payload\":"
                  + " 3}]}|false");

      // A second wait for all with a zero timeout: a fires from the inbox, b never comes.
      Held next = poll(c, "arms");
      waitFor(
          c,
          next,
          "s2",
          "{\"step\": \"w2\", \"all\": true, \"arms\": [{\"event\": \"a\"}, {\"event\": \"b\"}]}",
          0L);
      Held timedOut = poll(c, "arms");
      assertThat(timedOut.run()).isEqualTo(h.run());
      assertThat(journal(c, h.run(), "w2"))
          .isEqualTo("{\"fired\": [{\"event\": \"a\", \"payload\": 2}, null]}|true");
    }
  }

  @Test
  void aWaitWithoutTimeoutHasNoMessageUntilItsEventComes() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "forever");
      waitFor(c, h, "s", "{\"step\": \"w\", \"event\": \"e\"}", null);
      assertThat(query(c, "SELECT current_msg_id IS NULL FROM queue.workflow_run")).isEqualTo("t");
      assertThat(query(c, "SELECT count(*) FROM queue.q___wf_forever")).isEqualTo("0");
      assertThat(signal(c, h.run(), "e", "7", null)).isEqualTo("delivered");
      assertThat(poll(c, "forever").run()).isEqualTo(h.run());
    }
  }

  @Test
  void aSignalToAnEndedRunIsRefusedAndRetentionDeletesTheInbox() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "gone");
      signal(c, h.run(), "e", "1", null);
      complete(c, h, "s", "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60");
      assertThat(signal(c, h.run(), "e", "2", null)).isEqualTo("not running");
      exec(c, "UPDATE queue.workflow_run SET retention_days = 1");
      assertThat(query(c, "SELECT queue.sweep_workflow_runs(10, now() + interval '2 days')"))
          .isEqualTo("1");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_signal")).isEqualTo("0");
    }
  }
}
