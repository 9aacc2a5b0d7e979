package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.exec;
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
import org.junit.jupiter.api.Test;

/**
 * Updates: sent to a run, taken by a worker in a task of their own, answered once. An update task
 * goes ahead of a message that only waits for its time, which keeps that time, and waits behind a
 * task a worker holds; an answered update is a journal row with its state change, a refused one
 * leaves none.
 */
class UpdatesTest {

  private static String send(Connection c, long run, String name, String key) throws SQLException {
    return query(
        c,
        "SELECT update_id || ':' || status || ':' || created FROM queue.workflow_update_send("
            + run
            + ", '"
            + name
            + "', '{\"sku\": \"a\"}'::jsonb, "
            + (key == null ? "NULL" : "'" + key + "'")
            + ")");
  }

  private static long id(String sent) {
    return Long.parseLong(sent.substring(0, sent.indexOf(':')));
  }

  /** The reason of the task a poll hands out next (there must be one), with the task. */
  private static String reason(Connection c, Held h) throws SQLException {
    return query(
        c, "SELECT body ->> 'reason' FROM queue.\"q___wf_cart\" WHERE msg_id = " + h.msg());
  }

  private static String answer(Connection c, Held h, String answers) throws SQLException {
    return query(
        c,
        "SELECT queue.workflow_update_answer("
            + h.run()
            + ", "
            + h.msg()
            + ", "
            + h.receipt()
            + ", '"
            + answers
            + "'::jsonb) ->> 'outcome'");
  }

  private static String sleep(Connection c, Held h, String step) throws SQLException {
    return complete(c, h, step, "'{\"delayMs\": 3600000}'", "NULL", "60");
  }

  @Test
  void anUpdateGoesAheadOfASleepWhichKeepsItsTime() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "cart");
      assertThat(sleep(c, h, "nap")).startsWith("ok");
      String due = query(c, "SELECT vt FROM queue.\"q___wf_cart\"");
      long u = id(send(c, h.run(), "addItem", null));

      Held task = poll(c, "cart");
      assertThat(task.run()).isEqualTo(h.run());
      assertThat(reason(c, task)).isEqualTo("update");
      assertThat(
              query(
                  c,
                  "SELECT queue.workflow_update_take("
                      + task.run()
                      + ", "
                      + task.msg()
                      + ", "
                      + task.receipt()
                      + ") -> 'updates'"))
          .isEqualTo(
              "[{\"input\": {\"sku\": \"a\"}, \"update\": \"addItem\", \"updateId\": " + u + "}]");
      assertThat(
              answer(
                  c,
                  task,
                  "[{\"updateId\": "
                      + u
                      + ", \"status\": \"completed\", \"output\": 1, \"state\": {\"items\": 1}}]"))
          .isEqualTo("ok");

      assertThat(
              query(
                  c,
                  "SELECT status || ':' || output FROM queue.workflow_update_results(ARRAY["
                      + u
                      + "]::bigint[])"))
          .isEqualTo("completed:1");
      assertThat(rows(c, "SELECT step_name FROM queue.workflow_step ORDER BY seq"))
          .containsExactly("nap", "__update." + u);
      assertThat(query(c, "SELECT value FROM queue.workflow_state(" + h.run() + ")"))
          .isEqualTo("1");
      // The sleep's message is the run's head again, still due in an hour.
      assertThat(query(c, "SELECT vt || ':' || head FROM queue.\"q___wf_cart\""))
          .isEqualTo(due + ":true");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_poll('cart', '{1}', 10, 60)"))
          .isEqualTo("0");
    }
  }

  @Test
  void anUpdateWaitsBehindTheTaskAWorkerHolds() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "cart");
      long u = id(send(c, h.run(), "addItem", null));
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_poll('cart', '{1}', 10, 60)"))
          .as("nothing beside the body's task")
          .isEqualTo("0");
      assertThat(sleep(c, h, "nap")).startsWith("ok");
      Held task = poll(c, "cart");
      assertThat(reason(c, task)).isEqualTo("update");
      assertThat(
              answer(
                  c,
                  task,
                  "[{\"updateId\": "
                      + u
                      + ", \"status\": \"refused\", \"error\": {\"message\": \"no\"}}]"))
          .isEqualTo("ok");
      assertThat(rows(c, "SELECT step_name FROM queue.workflow_step")).containsExactly("nap");
      assertThat(query(c, "SELECT status FROM queue.workflow_updates(" + h.run() + ")"))
          .isEqualTo("refused");
    }
  }

  @Test
  void anAnswersSignalEndsTheRunsWait() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "cart");
      assertThat(
              complete(
                  c,
                  h,
                  "load",
                  "'{\"wait\": {\"step\": \"checkout\", \"event\": \"checkout\"}, \"delayMs\": 3600000}'",
                  "NULL",
                  "60"))
          .startsWith("ok");
      long u = id(send(c, h.run(), "checkout", null));
      Held task = poll(c, "cart");
      assertThat(
              answer(
                  c,
                  task,
                  "[{\"updateId\": "
                      + u
                      + ", \"status\": \"completed\", \"output\": \"ordered\","
                      + " \"signals\": [{\"event\": \"checkout\", \"payload\": {\"total\": 3}}]}]"))
          .isEqualTo("ok");
      assertThat(
              rows(
                  c,
                  "SELECT step_name || '=' || coalesce(output::text, '') FROM queue.workflow_step ORDER BY seq"))
          .containsExactly(
              "load=1",
              "__update."
                  + u
                  + "={\"input\": {\"sku\": \"a\"}, \"output\": \"ordered\", \"update\": \"checkout\"}",
              "checkout={\"total\": 3}");
      Held next = poll(c, "cart");
      assertThat(next.run()).isEqualTo(h.run());
      assertThat(reason(c, next)).isEqualTo("signal");
    }
  }

  @Test
  void aKeyAnswersTheFirstUpdateAndAnEndedRunTakesNone() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "cart");
      String first = send(c, h.run(), "addItem", "k1");
      assertThat(first).endsWith(":pending:true");
      assertThat(send(c, h.run(), "addItem", "k1")).isEqualTo(id(first) + ":pending:false");
      assertThat(
              complete(c, h, "done", "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60"))
          .startsWith("ok");
      assertThat(send(c, h.run(), "addItem", "k1"))
          .as("pending when its run ended: dropped")
          .isEqualTo(id(first) + ":dropped:false");
      assertThatThrownBy(() -> send(c, h.run(), "addItem", null))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("takes no update")
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("WF003");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_poll('cart', '{1}', 10, 60)"))
          .as("the ended run's update task is dropped")
          .isEqualTo("0");
      assertThat(query(c, "SELECT count(*) FROM queue.\"q___wf_cart\"")).isEqualTo("0");
    }
  }

  @Test
  void badInputChangesNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "cart");
      assertThatThrownBy(() -> send(c, h.run(), "no spaces", null))
          .hasMessageContaining("update name");
      assertThatThrownBy(() -> send(c, 999_999, "addItem", null))
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("P0002");
      assertThat(sleep(c, h, "nap")).startsWith("ok");
      long u = id(send(c, h.run(), "addItem", null));
      Held task = poll(c, "cart");
      assertThatThrownBy(() -> answer(c, task, "[{\"updateId\": " + u + ", \"status\": \"done\"}]"))
          .hasMessageContaining("answers[].status");
      assertThatThrownBy(
              () -> answer(c, task, "[{\"updateId\": " + u + ", \"status\": \"failed\"}]"))
          .hasMessageContaining("answers[].error");
      assertThatThrownBy(
              () ->
                  answer(
                      c,
                      task,
                      "[{\"updateId\": "
                          + u
                          + ", \"status\": \"completed\", \"state\": {\"__x\": 1}}]"))
          .hasMessageContaining("key");
      assertThat(
              answer(
                  c,
                  new Held(task.run(), task.msg(), task.receipt() + 1),
                  "[{\"updateId\": " + u + ", \"status\": \"completed\"}]"))
          .isEqualTo("stale");
      assertThat(rows(c, "SELECT step_name FROM queue.workflow_step")).containsExactly("nap");
      assertThat(query(c, "SELECT status FROM queue.workflow_updates(" + h.run() + ")"))
          .isEqualTo("pending");
      exec(c, "SELECT 1");
    }
  }

  private static String withStart(Connection c, String key) throws SQLException {
    return query(
        c,
        "SELECT run_id || ':' || run_created || ':' || update_id || ':' || created FROM"
            + " queue.workflow_update_with_start('cart', '\"ada\"'::jsonb, NULL, "
            + (key == null ? "NULL" : "'" + key + "'")
            + ", NULL, NULL, NULL, NULL, 'addItem', '{\"sku\": \"tea\"}'::jsonb)");
  }

  @Test
  void anUpdateWithStartMakesTheRunOnceAndUpdatesItEachTime() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String[] first = withStart(c, "cart-ada").split(":");
      assertThat(first[1]).isEqualTo("true");
      String[] second = withStart(c, "cart-ada").split(":");
      assertThat(second[0]).as("the key's run").isEqualTo(first[0]);
      assertThat(second[1]).isEqualTo("false");
      assertThat(second[2]).isNotEqualTo(first[2]);
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_updates(" + first[0] + ")"))
          .isEqualTo("2");
      Held task = poll(c, "cart");
      assertThat(reason(c, task))
          .as("the updates come before the body's first task")
          .isEqualTo("update");

      assertThatThrownBy(() -> withStart(c, null))
          .hasMessageContaining("idempotencyKey")
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("22023");
      exec(c, "SELECT queue.workflow_cancel(" + first[0] + ")");
      assertThatThrownBy(() -> withStart(c, "cart-ada"))
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("WF003");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("1");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_updates(" + first[0] + ")"))
          .isEqualTo("2");
    }
  }
}
