package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.Notifications;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A send to {@code __wf_<name>} is a start: the way to start a run inside the caller's own
 * transaction, with the caller's rows, all or nothing.
 */
class SendToWorkflowQueueStartsRunTest {
  private static TestDatabase db;

  @BeforeAll
  static void database() {
    db = TestDatabase.fresh();
  }

  @Test
  void aSendInATransactionThatRollsBackLeavesNoRunNoMessageAndNoWakeup() throws SQLException {
    try (Connection listener = db.connect();
        Connection app = db.connect()) {
      Notifications wakeups = Notifications.listen(listener);
      exec(app, "CREATE TABLE signups_rb (email text PRIMARY KEY, run_id bigint)");
      app.setAutoCommit(false);
      exec(
          app,
          "INSERT INTO signups_rb VALUES ('a@b.c', queue.send('__wf_rb',"
              + " '{\"email\": \"a@b.c\"}'::jsonb, '{\"idempotencyKey\": \"a@b.c\"}'::jsonb))");
      assertThat(query(app, "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'rb'"))
          .as("the run exists inside the transaction")
          .isEqualTo("1");
      app.rollback();
      app.setAutoCommit(true);

      assertThat(query(app, "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'rb'"))
          .isEqualTo("0");
      assertThat(query(app, "SELECT count(*) FROM signups_rb")).isEqualTo("0");
      assertThat(query(app, "SELECT to_regclass('queue.q___wf_rb') IS NULL"))
          .as("no queue, so no message")
          .isEqualTo("t");
      assertThat(wakeups.heard()).isEmpty();
    }
  }

  @Test
  void aSendInATransactionThatCommitsStartsOneRunThatAWorkerPolls() throws SQLException {
    try (Connection listener = db.connect();
        Connection app = db.connect()) {
      Notifications wakeups = Notifications.listen(listener);
      exec(app, "CREATE TABLE signups_ok (email text PRIMARY KEY, run_id bigint)");
      app.setAutoCommit(false);
      exec(
          app,
          "INSERT INTO signups_ok VALUES ('a@b.c', queue.send('__wf_ok',"
              + " '{\"email\": \"a@b.c\"}'::jsonb, '{\"idempotencyKey\": \"a@b.c\"}'::jsonb))");
      assertThat(wakeups.heard()).as("nothing before commit").isEmpty();
      app.commit();
      app.setAutoCommit(true);

      assertThat(wakeups.heard()).containsExactly("__wf_ok");
      String run = query(app, "SELECT run_id FROM signups_ok");
      assertThat(
              rows(
                  app,
                  "SELECT run_id || ' ' || status || ' ' || input || ' ' || idempotency_key"
                      + " FROM queue.workflow_run WHERE workflow_name = 'ok'"))
          .as("the send answered the run id")
          .containsExactly(run + " running {\"email\": \"a@b.c\"} a@b.c");
      WorkflowSql.Held task = WorkflowSql.poll(app, "ok");
      assertThat(task.run()).isEqualTo(Long.parseLong(run));
      assertThat(rows(app, "SELECT run_id FROM queue.workflow_poll('ok', '{1}', 1, 60)"))
          .as("one run, leased now: nothing more to poll")
          .isEmpty();
    }
  }

  @Test
  void aRepeatedIdempotencyKeyAnswersTheSameRunAndStartsNoOther() throws SQLException {
    try (Connection c = db.connect()) {
      String send =
          "SELECT queue.send('__wf_key', '1'::jsonb, '{\"idempotencyKey\": \"k\"}'::jsonb)";
      String first = query(c, send);
      String again = query(c, send);
      String batch =
          query(
              c,
              "SELECT string_agg(msg_id::text, ',') FROM queue.send_batch('__wf_key',"
                  + " '[{\"body\": 2, \"headers\": {\"idempotencyKey\": \"k\"}}, {\"body\": 3}]')");

      assertThat(again).isEqualTo(first);
      assertThat(batch.split(",")).hasSize(2).startsWith(first).doesNotHaveDuplicates();
      assertThat(rows(c, "SELECT input FROM queue.workflow_run WHERE workflow_name = 'key'"))
          .containsExactlyInAnyOrder("1", "3");
      assertThat(query(c, "SELECT count(*) FROM queue.q___wf_key")).isEqualTo("2");
    }
  }

  @Test
  void aTopicFanOutToAWorkflowQueueStartsARun() throws SQLException {
    try (Connection c = db.connect()) {
      exec(c, "SELECT * FROM queue.subscribe('signups.#', 'queue', '__wf_fan')");
      String id =
          query(
              c,
              "SELECT id FROM queue.publish('signups.eu', '{\"email\": \"x@y.z\"}',"
                  + " '{\"idempotencyKey\": \"x\"}')");
      assertThat(
              rows(
                  c,
                  "SELECT run_id || ' ' || input FROM queue.workflow_run r"
                      + " WHERE workflow_name = 'fan'"))
          .containsExactly(id + " {\"email\": \"x@y.z\"}");
    }
  }

  @Test
  void aSendToAWorkflowQueueTakesNoDelayNoGroupAndNeedsAWorkflowName() throws SQLException {
    try (Connection c = db.connect()) {
      for (String bad :
          new String[] {
            "SELECT queue.send('__wf_bad', '1', NULL, 5)",
            "SELECT queue.send('__wf_bad', '1', NULL, 0, '7')",
            "SELECT queue.send('__wf_-bad', '1')",
            "SELECT * FROM queue.send_batch('__wf_bad', '[{\"body\": 1}, {\"body\": 2, \"delaySeconds\": 1}]')"
          }) {
        assertThatThrownBy(() -> exec(c, bad))
            .as(bad)
            .isInstanceOfSatisfying(
                SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("22023"));
      }
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'bad'"))
          .as("the batch's good first message started nothing either")
          .isEqualTo("0");
    }
  }
}
