package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A completion batch that ends a run waits for a cancel of that run in flight, and then answers by
 * what the cancel left: the run is not running, so the item only acks, and the cancel stands. The
 * batch's other items go through as if the cancel had not happened.
 */
class BatchCancelRaceTest {

  @Test
  void anEndingRunCancelledMeanwhileIsNotRunningAndStaysCancelled() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection worker = db.connect();
        Connection canceller = db.connect()) {
      WorkflowSql.Held ending = WorkflowSql.startAndPoll(worker, "race");
      WorkflowSql.Held going = WorkflowSql.startAndPoll(worker, "race");

      canceller.setAutoCommit(false);
      assertThat(
              query(canceller, "SELECT cancelled FROM queue.workflow_cancel(" + ending.run() + ")"))
          .isEqualTo("t");

      String items =
          "["
              + QueueSql.finishingBatch(ending.run(), ending.msg(), ending.receipt())
                  .replaceAll("^\\[|\\]$", "")
              + String.format(
                  ", {\"run_id\": %d, \"msg_id\": %d, \"receipt\": %d, \"step_name\": \"a\","
                      + " \"step_kind\": \"run\", \"output\": 1, \"next\": {\"inline\": true}}]",
                  going.run(), going.msg(), going.receipt());
      CompletableFuture<List<String>> batch =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return outcomes(worker, items);
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      // The batch waits on the run the cancel holds.
      Thread.sleep(300);
      assertThat(batch).isNotDone();
      canceller.commit();

      assertThat(batch.get(10, TimeUnit.SECONDS)).containsExactly("not_running", "ok");
      try (Connection look = db.connect()) {
        assertThat(
                query(look, "SELECT status FROM queue.workflow_run WHERE run_id = " + ending.run()))
            .isEqualTo("cancelled");
        assertThat(
                query(
                    look,
                    "SELECT count(*) FROM queue.workflow_step WHERE run_id = " + ending.run()))
            .as("nothing journaled for the cancelled run")
            .isEqualTo("0");
        assertThat(
                query(look, "SELECT status FROM queue.workflow_run WHERE run_id = " + going.run()))
            .isEqualTo("running");
        assertThat(
                query(
                    look,
                    "SELECT string_agg(step_name, ',') FROM queue.workflow_step WHERE run_id = "
                        + going.run()))
            .isEqualTo("a");
      }
      exec(canceller, "ROLLBACK");
    }
  }

  private static List<String> outcomes(Connection c, String items) throws SQLException {
    List<String> out = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT outcome FROM queue.workflow_complete_batch('race', ?::jsonb) ORDER BY ord")) {
      ps.setString(1, items);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    return out;
  }
}
