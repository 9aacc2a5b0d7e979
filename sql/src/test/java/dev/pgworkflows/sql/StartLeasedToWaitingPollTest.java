package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.Notifications;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * workflow_start_leased: the runs start as a start would, and the first messages of those a waiting
 * poll takes are leased to it in the same transaction, with a receipt that completes their steps;
 * the others are there for any poll, and only they wake listeners.
 */
class StartLeasedToWaitingPollTest {

  private static String one(Connection c, String sql) throws SQLException {
    List<String> r = rows(c, sql);
    assertThat(r).hasSize(1);
    return r.get(0);
  }

  @Test
  void aLoneStartIsLeasedToThePollSilentlyAndItsReceiptCompletesTheStep() throws SQLException {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Connection listener = db.connect()) {
      rows(c, "SELECT queue.workflow_register_versions('hs', ARRAY[1, 2])::text");
      Notifications wakeups = Notifications.listen(listener);
      String answer =
          one(
              c,
              "SELECT concat_ws(' ', ord, status, created, attempt, version, reason,"
                  + " trace_context, started_at <= now(), run_id, msg_id, receipt)"
                  + " FROM queue.workflow_start_leased('hs',"
                  + " '[{\"input\": {\"n\": 1}, \"traceContext\": \"t-r-p\"}]', ARRAY[2], 1, 90)");
      String[] f = answer.split(" ");
      assertThat(String.join(" ", List.of(f).subList(0, 8)))
          .isEqualTo("1 running t 1 2 start t-r-p t");
      String run = f[8];
      String msg = f[9];
      String receipt = f[10];
      assertThat(wakeups.heard()).as("a leased start wakes nobody").isEmpty();

      // The message is leased as a poll would lease it, and the run is as a start makes it.
      assertThat(
              one(
                  c,
                  "SELECT concat_ws(' ', m.read_ct, m.head, m.group_id = r.run_id::text,"
                      + " queue.receipt_of(m.vt) = "
                      + receipt
                      + ", m.vt BETWEEN now() + interval '80 seconds' AND now() + interval '100"
                      + " seconds', r.input, r.workflow_version, r.current_msg_id = m.msg_id)"
                      + " FROM queue.workflow_run r JOIN queue.q___wf_hs m ON m.msg_id = "
                      + msg
                      + " WHERE r.run_id = "
                      + run))
          .isEqualTo("1 t t t t {\"n\": 1} 2 t");
      assertThat(rows(c, "SELECT run_id FROM queue.workflow_poll('hs', ARRAY[1, 2], 10, 60)"))
          .as("no other poll gets it")
          .isEmpty();
      assertThat(
              one(
                  c,
                  "SELECT outcome FROM queue.workflow_complete_step("
                      + run
                      + ", "
                      + msg
                      + ", "
                      + receipt
                      + ", 'a', 'run', '1', NULL, now(), '{\"inline\": true}', NULL, 60)"))
          .isEqualTo("ok");
    }
  }

  @Test
  void runsThePollDoesNotTakeAreLeftForAnyPollAndWakeListeners() throws SQLException {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Connection listener = db.connect()) {
      rows(c, "SELECT queue.workflow_register_versions('hs', ARRAY[1, 2])::text");
      Notifications wakeups = Notifications.listen(listener);
      // Another version than the poll runs.
      assertThat(
              one(
                  c,
                  "SELECT concat_ws(' ', created, msg_id IS NULL, receipt IS NULL)"
                      + " FROM queue.workflow_start_leased('hs', '[{\"input\": 1, \"version\": 1}]',"
                      + " ARRAY[2], 1, 60)"))
          .isEqualTo("t t t");
      assertThat(wakeups.heard()).containsExactly("__wf_hs");

      // A batch: the poll takes two, in item order, of the runs of its version created here.
      List<String> answers =
          rows(
              c,
              "SELECT concat_ws(' ', ord, created, msg_id IS NOT NULL, attempt)"
                  + " FROM queue.workflow_start_leased('hs', '["
                  + "{\"input\": 2, \"version\": 1},"
                  + "{\"input\": 3},"
                  + "{\"input\": 4, \"idempotencyKey\": \"k\"},"
                  + "{\"input\": 5}]', ARRAY[2], 2, 60) ORDER BY ord");
      assertThat(answers).containsExactly("1 t f", "2 t t 1", "3 t t 1", "4 t f");
      assertThat(wakeups.heard()).containsExactly("__wf_hs");
      assertThat(
              rows(
                  c,
                  "SELECT p.input::text FROM queue.workflow_poll('hs', ARRAY[1, 2], 10, 60) p"
                      + " ORDER BY p.run_id"))
          .as("what was not leased is there to poll")
          .containsExactly("1", "2", "5");

      // A key that names a run already there is answered, never leased.
      assertThat(
              one(
                  c,
                  "SELECT concat_ws(' ', created, msg_id IS NULL)"
                      + " FROM queue.workflow_start_leased('hs',"
                      + " '[{\"input\": 9, \"idempotencyKey\": \"k\"}]', ARRAY[2], 1, 60)"))
          .isEqualTo("f t");

      // When the poll takes them all, nobody is woken.
      rows(
          c,
          "SELECT ord::text FROM queue.workflow_start_leased('hs',"
              + " '[{\"input\": 6}, {\"input\": 7}]', ARRAY[2], 5, 60)");
      assertThat(wakeups.heard()).isEmpty();
    }
  }

  @Test
  void badTermsOrItemsAreRefusedAndStartNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String runs = "SELECT count(*)::text FROM queue.workflow_run";
      assertThat(one(c, runs)).isEqualTo("0");
      for (String bad :
          List.of(
              "'[{\"input\": 1}]', ARRAY[1], 0, 60",
              "'[{\"input\": 1}]', ARRAY[1], 101, 60",
              "'[{\"input\": 1}]', ARRAY[1], 1, 0",
              "'[{\"input\": 1}]', ARRAY[]::int[], 1, 60",
              "'[{\"input\": 1}]', ARRAY[1, NULL], 1, 60",
              "'[{\"input\": 1, \"version\": \"x\"}]', ARRAY[1], 1, 60",
              "'[{\"input\": 1, \"version\": 0}]', ARRAY[1], 1, 60",
              "'[{\"input\": 1, \"retentionDays\": 36501}]', ARRAY[1], 1, 60",
              "'[{\"input\": 1}, 7]', ARRAY[1], 1, 60",
              "'{\"input\": 1}', ARRAY[1], 1, 60")) {
        assertThatThrownBy(
                () ->
                    rows(
                        c,
                        "SELECT run_id::text FROM queue.workflow_start_leased('hs', " + bad + ")"))
            .as(bad)
            .isInstanceOf(SQLException.class)
            .extracting(e -> ((SQLException) e).getSQLState())
            .isEqualTo("22023");
      }
      assertThat(one(c, runs)).isEqualTo("0");
    }
  }
}
