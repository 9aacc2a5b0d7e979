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
 * A child run is started once per parent step, linked to its parent, and tells the parent of its
 * end in the transaction that ends it; cancelling the parent cancels the children that asked for
 * it.
 */
class ChildRunsTest {

  private static long startChild(Connection c, long parent, String step, String policy)
      throws SQLException {
    return Long.parseLong(
        query(
            c,
            "SELECT run_id FROM queue.workflow_start_child("
                + parent
                + ", '"
                + step
                + "', 'kid', '{\"n\": 1}'::jsonb, NULL, '"
                + policy
                + "')"));
  }

  @Test
  void aStepStartsItsChildOnceAndTheChildsEndWakesTheWaitingParent() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held parent = startAndPoll(c, "mom");
      long child = startChild(c, parent.run(), "ship", "cancel");
      assertThat(startChild(c, parent.run(), "ship", "cancel")).isEqualTo(child);
      assertThat(rows(c, "SELECT run_id FROM queue.workflow_children(" + parent.run() + ")"))
          .containsExactly(Long.toString(child));
      // The parent waits for the child's end, with no timeout.
      complete(
          c,
          parent,
          "ship",
          "'{\"wait\": {\"step\": \"ship.result\", \"event\": \"__child." + child + "\"}}'",
          "NULL",
          "60");
      Held kid = poll(c, "kid");
      assertThat(kid.run()).isEqualTo(child);
      complete(c, kid, "work", "NULL", "'{\"status\": \"completed\", \"output\": 42}'", "60");
      assertThat(
              query(
                  c,
                  "SELECT output ->> 'status' || ':' || (output ->> 'output') FROM queue.workflow_step"
                      + " WHERE step_name = 'ship.result'"))
          .isEqualTo("completed:42");
      assertThat(poll(c, "mom").run()).isEqualTo(parent.run());
    }
  }

  @Test
  void aChildThatEndsBeforeTheParentWaitsIsFoundInTheInbox() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held parent = startAndPoll(c, "mom");
      long child = startChild(c, parent.run(), "ship", "cancel");
      Held kid = poll(c, "kid");
      complete(
          c,
          kid,
          "work",
          "NULL",
          "'{\"status\": \"failed\", \"error\": {\"type\": \"X\", \"message\": \"no\"}}'",
          "60");
      complete(
          c,
          parent,
          "ship",
          "'{\"wait\": {\"step\": \"ship.result\", \"event\": \"__child." + child + "\"}}'",
          "NULL",
          "60");
      assertThat(
              query(
                  c,
                  "SELECT output ->> 'status' FROM queue.workflow_step WHERE step_name = 'ship.result'"))
          .isEqualTo("failed");
    }
  }

  @Test
  void cancellingAParentCancelsChildrenThatAskedForItAndLeavesTheOthers() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held parent = startAndPoll(c, "mom");
      long cancelled = startChild(c, parent.run(), "a", "cancel");
      long abandoned = startChild(c, parent.run(), "b", "abandon");
      exec(c, "SELECT * FROM queue.workflow_cancel(" + parent.run() + ")");
      assertThat(rows(c, "SELECT run_id || ':' || status FROM queue.workflow_run ORDER BY run_id"))
          .containsExactly(
              parent.run() + ":cancelled", cancelled + ":cancelled", abandoned + ":running");
    }
  }

  @Test
  void aParentThatIsNotRunningStartsNoChildAndAChildOutlivesItsParentsRow() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held parent = startAndPoll(c, "mom");
      long child = startChild(c, parent.run(), "a", "abandon");
      complete(c, parent, "s", "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60");
      assertThatThrownBy(() -> startChild(c, parent.run(), "b", "cancel"))
          .hasMessageContaining("starts no children");
      Held kid = poll(c, "kid");
      complete(c, kid, "s", "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60");
      // Both past retention: the parent goes first, the child in the next sweep.
      exec(c, "UPDATE queue.workflow_run SET retention_days = 1");
      assertThat(query(c, "SELECT queue.sweep_workflow_runs(10, now() + interval '2 days')"))
          .isEqualTo("1");
      assertThat(rows(c, "SELECT run_id FROM queue.workflow_run"))
          .containsExactly(Long.toString(child));
      assertThat(query(c, "SELECT queue.sweep_workflow_runs(10, now() + interval '2 days')"))
          .isEqualTo("1");
    }
  }
}
