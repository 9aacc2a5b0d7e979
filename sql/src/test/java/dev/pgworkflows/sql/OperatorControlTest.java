package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.inline;
import static dev.pgworkflows.sql.WorkflowSql.poll;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An operator's controls in SQL: paused workflows and runs are not handed out (their tasks wait,
 * and run again after the resume), paused queue groups are passed by, a parked head lets its group
 * go on, a restart sets later journal rows aside and a fork copies earlier ones into a new run.
 */
class OperatorControlTest {

  private static final String POLL =
      "SELECT count(*) FROM queue.workflow_poll('%s', '{1}', 10, 60)";

  @Test
  void aPausedWorkflowTakesStartsAndHandsNothingOutUntilResumed() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.workflow_start('held', '1'::jsonb)");
      assertThat(query(c, "SELECT paused FROM queue.workflow_pause_set('held', true)"))
          .isEqualTo("t");
      exec(c, "SELECT queue.workflow_start('held', '2'::jsonb)");
      assertThat(query(c, String.format(POLL, "held"))).isEqualTo("0");
      // A start handed to a waiting worker is not leased either.
      assertThat(
              query(
                  c,
                  "SELECT count(msg_id) FROM queue.workflow_start_leased('held',"
                      + " '[{\"input\": 3}]'::jsonb, '{1}', 1, 60)"))
          .isEqualTo("0");
      assertThat(
              query(c, "SELECT paused FROM queue.workflow_summary() WHERE workflow_name = 'held'"))
          .isEqualTo("t");
      exec(c, "SELECT queue.workflow_pause_set('held', false)");
      assertThat(query(c, String.format(POLL, "held"))).isEqualTo("3");
    }
  }

  @Test
  void aPausedRunsDueTaskIsParkedAndComesBackAtItsResume() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.workflow_start('one', '1'::jsonb)");
      exec(c, "SELECT queue.workflow_start('one', '2'::jsonb)");
      long first = Long.parseLong(query(c, "SELECT min(run_id) FROM queue.workflow_run"));
      exec(c, "SELECT queue.workflow_run_pause(" + first + ", true)");
      assertThat(rows(c, "SELECT run_id FROM queue.workflow_poll('one', '{1}', 10, 60)"))
          .containsExactly(Long.toString(first + 1));
      assertThat(
              query(
                  c,
                  "SELECT (vt = queue.parked_vt()) || ':' || read_ct FROM queue.q___wf_one"
                      + " WHERE group_id = '"
                      + first
                      + "'"))
          .isEqualTo("true:0");
      exec(c, "SELECT queue.workflow_run_pause(" + first + ", false)");
      assertThat(
              query(
                  c,
                  "SELECT run_id || ':' || attempt FROM queue.workflow_poll('one', '{1}', 10, 60)"))
          .isEqualTo(first + ":1");
    }
  }

  @Test
  void aPollWhoseFirstTaskIsAPausedRunsHandsOutTheNextDueOne() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.workflow_start('room', '1'::jsonb)");
      exec(c, "SELECT queue.workflow_start('room', '2'::jsonb)");
      long first = Long.parseLong(query(c, "SELECT min(run_id) FROM queue.workflow_run"));
      exec(c, "SELECT queue.workflow_run_pause(" + first + ", true)");
      assertThat(poll(c, "room").run()).isEqualTo(first + 1);
    }
  }

  @Test
  void aStepFinishingAfterThePauseIsJournaledAndItsRunHandedBack() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "mid");
      exec(c, "SELECT queue.workflow_run_pause(" + h.run() + ", true)");
      assertThat(inline(c, h, "a")).isEqualTo("paused:");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step WHERE run_id = " + h.run()))
          .isEqualTo("1");
      assertThat(query(c, String.format(POLL, "mid"))).isEqualTo("0");
      exec(c, "SELECT queue.workflow_run_pause(" + h.run() + ", false)");
      Held again = poll(c, "mid");
      assertThat(again.run()).isEqualTo(h.run());

      // The same in a batch, for a paused workflow: the inline item is handed back.
      exec(c, "SELECT queue.workflow_pause_set('mid', true)");
      String batch =
          "[{\"run_id\": %d, \"msg_id\": %d, \"receipt\": %d, \"step_name\": \"b\","
              + " \"step_kind\": \"run\", \"output\": 2, \"next\": {\"inline\": true}}]";
      assertThat(
              query(
                  c,
                  "SELECT outcome FROM queue.workflow_complete_batch('mid', '"
                      + String.format(batch, again.run(), again.msg(), again.receipt())
                      + "'::jsonb)"))
          .isEqualTo("paused");
      assertThat(query(c, String.format(POLL, "mid"))).isEqualTo("0");
      exec(c, "SELECT queue.workflow_pause_set('mid', false)");
      assertThat(query(c, String.format(POLL, "mid"))).isEqualTo("1");
    }
  }

  @Test
  void aRunPausedWhileWaitingForASlotKeepsItsPlaceAndTakesItsSlotAfterTheResume()
      throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('slots', 1)");
      String keyed =
          "SELECT run_id FROM queue.workflow_start('slots', '1'::jsonb, NULL, NULL, NULL, 365,"
              + " NULL, '{\"concurrencyKey\": \"k\"}'::jsonb)";
      long holder = Long.parseLong(query(c, keyed));
      long waiter = Long.parseLong(query(c, keyed));
      Held h = poll(c, "slots");
      assertThat(h.run()).isEqualTo(holder);
      assertThat(query(c, String.format(POLL, "slots"))).isEqualTo("0");
      exec(c, "SELECT queue.workflow_run_pause(" + waiter + ", true)");
      // Resumed while still waiting: admitted afresh, it keeps waiting for the slot.
      exec(c, "SELECT queue.workflow_run_pause(" + waiter + ", false)");
      assertThat(query(c, String.format(POLL, "slots"))).isEqualTo("0");
      exec(c, "SELECT queue.workflow_run_pause(" + waiter + ", true)");

      // The holder ends: the waiter is woken, but paused it is parked again, the slot passed on.
      assertThat(complete(c, h, "a", "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60"))
          .isEqualTo("ok:");
      assertThat(query(c, String.format(POLL, "slots"))).isEqualTo("0");
      exec(c, "SELECT queue.workflow_run_pause(" + waiter + ", false)");
      assertThat(poll(c, "slots").run()).isEqualTo(waiter);
    }
  }

  @Test
  void pausingARunThatEndedIsAConflictAndChangesNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "over");
      exec(c, "SELECT queue.workflow_cancel(" + h.run() + ")");
      assertThatThrownBy(() -> exec(c, "SELECT queue.workflow_run_pause(" + h.run() + ", true)"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("only a running run can be paused")
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("WF003");
      assertThat(
              query(
                  c, "SELECT paused_at IS NULL FROM queue.workflow_run WHERE run_id = " + h.run()))
          .isEqualTo("t");
    }
  }

  @Test
  void aRestartSetsLaterRowsAsideAndMakesTheRunDue() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "again");
      assertThat(inline(c, h, "a")).startsWith("ok:");
      Held h2 = new Held(h.run(), h.msg(), Long.parseLong(inline(c, h, "b").substring(3)));
      assertThat(
              complete(
                  c,
                  h2,
                  "c",
                  "NULL",
                  "'{\"status\": \"failed\", \"error\": {\"message\": \"boom\"}}'",
                  "60"))
          .isEqualTo("ok:");

      assertThatThrownBy(() -> exec(c, "SELECT queue.workflow_restart(" + h.run() + ", 'zz')"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("has no step \"zz\"");
      assertThat(query(c, "SELECT status::text FROM queue.workflow_run WHERE run_id = " + h.run()))
          .isEqualTo("failed");

      assertThat(query(c, "SELECT queue.workflow_restart(" + h.run() + ", 'b')")).isEqualTo("2");
      assertThat(
              query(
                  c,
                  "SELECT status || ':' || (error IS NULL) FROM queue.workflow_run WHERE run_id = "
                      + h.run()))
          .isEqualTo("running:true");
      assertThat(rows(c, "SELECT step_name FROM queue.workflow_step WHERE run_id = " + h.run()))
          .containsExactly("a");
      assertThat(
              rows(
                  c,
                  "SELECT x ->> 'name' || ':' || (x ->> 'setAside') FROM"
                      + " jsonb_array_elements(queue.workflow_journal_with_aside("
                      + h.run()
                      + ")) x"))
          .containsExactly("a:false", "b:true", "c:true");
      Held back = poll(c, "again");
      assertThat(back.run()).isEqualTo(h.run());
      // A running run is not restarted.
      assertThatThrownBy(() -> exec(c, "SELECT queue.workflow_restart(" + h.run() + ", 'a')"))
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("WF003");
    }
  }

  @Test
  void aForkCopiesTheRowsBeforeItsStepIntoANewRunDueNow() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "tree");
      inline(c, h, "a");
      inline(c, h, "b");
      long fork =
          Long.parseLong(
              query(
                  c,
                  "SELECT queue.workflow_fork(" + h.run() + ", 'b', '{\"x\": 9}'::jsonb, true)"));
      assertThat(
              query(
                  c,
                  "SELECT input::text || ':' || forked_from_run || ':' || forked_from_step"
                      + " FROM queue.workflow_run WHERE run_id = "
                      + fork))
          .isEqualTo("{\"x\": 9}:" + h.run() + ":b");
      assertThat(rows(c, "SELECT step_name FROM queue.workflow_step WHERE run_id = " + fork))
          .containsExactly("a");
      assertThat(poll(c, "tree").run()).isEqualTo(fork);
      long same =
          Long.parseLong(query(c, "SELECT queue.workflow_fork(" + h.run() + ", 'a', NULL, false)"));
      assertThat(query(c, "SELECT input::text FROM queue.workflow_run WHERE run_id = " + same))
          .isEqualTo("1");
    }
  }

  @Test
  void aPausedGroupIsPassedByAndAParkedHeadLetsItsGroupGoOn() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      q.create("orders", true, 30, null);
      long m1 = q.send("orders", "1", null, 0, "g1");
      long m2 = q.send("orders", "2", null, 0, "g1");
      long m3 = q.send("orders", "3", null, 0, "g2");
      exec(c, "SELECT queue.group_pause_set('orders', 'g1', true)");
      assertThat(ids(q.receive("orders", 10, 30, null, null))).containsExactly(m3);
      exec(c, "SELECT queue.group_pause_set('orders', 'g1', false)");
      assertThat(ids(q.receive("orders", 10, 30, null, null))).containsExactly(m1);

      assertThat(query(c, "SELECT msg_id FROM queue.group_park('orders', 'g1')"))
          .isEqualTo(Long.toString(m1));
      assertThat(ids(q.receive("orders", 10, 30, null, null))).containsExactly(m2);
      long parked = Long.parseLong(query(c, "SELECT parked_id FROM queue.parked_list('orders')"));
      long back = Long.parseLong(query(c, "SELECT queue.parked_redrive('orders', " + parked + ")"));
      assertThat(back).isGreaterThan(m3);
      assertThat(query(c, "SELECT count(*) FROM queue.parked_list('orders')")).isEqualTo("0");
      // It waits behind m2, the group's head, which is in flight.
      assertThat(q.receive("orders", 10, 30, null, null)).isEmpty();
      assertThat(rows(c, "SELECT msg_id FROM queue.group_park('orders', 'nobody')")).isEmpty();
    }
  }

  @Test
  void aQueueWithMaxReceivesPassesItsPausedGroupsByToo() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      q.create("capped", true, 30, 3);
      q.send("capped", "1", null, 0, "held");
      long free = q.send("capped", "2", null, 0, "free");
      exec(c, "SELECT queue.group_pause_set('capped', 'held', true)");
      assertThat(ids(q.receive("capped", 10, 0, null, null))).containsExactly(free);
      assertThat(query(c, "SELECT queue.group_paused('capped', 'held')")).isEqualTo("t");
      assertThatThrownBy(() -> exec(c, "SELECT queue.group_pause_set('__wf_x', 'g', true)"))
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("WF001");
    }
  }

  @Test
  void aGroupOfAQueueThatIsNotFifoCannotBePaused() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      q.create("plain", false, 30, null);
      long m = q.send("plain", "1", null, 0, "g");
      assertThatThrownBy(() -> exec(c, "SELECT queue.group_pause_set('plain', 'g', true)"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("group pauses are for FIFO queues")
          .hasMessageContaining("\"plain\"")
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("22023");
      assertThatThrownBy(() -> exec(c, "SELECT queue.group_pause_set('plain', 'g', false)"))
          .isInstanceOf(SQLException.class);
      assertThat(query(c, "SELECT count(*) FROM queue.group_pause")).isEqualTo("0");
      assertThat(query(c, "SELECT paused_groups FROM queue.queue_meta WHERE queue_name = 'plain'"))
          .isEqualTo("0");
      assertThat(ids(q.receive("plain", 10, 30, null, null))).containsExactly(m);
    }
  }

  private static List<Long> ids(List<QueueSql.Msg> msgs) {
    return msgs.stream().map(QueueSql.Msg::id).toList();
  }
}
