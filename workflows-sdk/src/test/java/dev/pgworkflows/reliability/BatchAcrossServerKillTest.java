package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.EventBatch;
import dev.pgworkflows.workflows.Topics;
import dev.pgworkflows.workflows.WorkflowClient;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A batching subscription whose server is SIGKILLed with a batch half full: the messages wait in
 * the database, no run starts while no server runs, and the next server starts the batch's one run
 * with every message, in order, once its time has come; a batch filled on it starts at once.
 */
@Tag("reliability")
class BatchAcrossServerKillTest {

  @Test
  void aHalfFullBatchOutlivesItsServerAndStartsOnceOnTheNext(@TempDir Path dir) throws Exception {
    TestDatabase db = TestDatabase.fresh();
    int port = ServerJvms.freePort();
    Map<String, String> env = new java.util.HashMap<>(ServerJvms.env(db, port));
    env.put("WORKFLOWS_SCHEDULE_INTERVAL_MS", "100");
    String url = "http://localhost:" + port;
    Process first = ServerJvms.current(dir.resolve("first.out"), env);
    Process second = null;
    try {
      ChildJvm.awaitReady(url, dir.resolve("first.out"));
      Topics topics = WorkflowClient.connect(url).topics();
      topics.subscribe("clicks.#", "tally", EventBatch.of(5, Duration.ofSeconds(3)));
      for (int i = 1; i <= 3; i++) {
        assertThat(topics.publish("clicks.home", Map.of("n", i)))
            .extracting(Topics.Delivery::type)
            .containsExactly("batched");
      }
      ChildJvm.kill(first);
      assertThat(count(db, "SELECT count(*) FROM queue.batch_item")).isEqualTo(3);
      Thread.sleep(4_000); // past the batch's time, with no server
      assertThat(count(db, "SELECT count(*) FROM queue.workflow_run")).isZero();

      second = ServerJvms.current(dir.resolve("second.out"), env);
      ChildJvm.awaitReady(url, dir.resolve("second.out"));
      long deadline = System.currentTimeMillis() + 30_000;
      while (count(db, "SELECT count(*) FROM queue.workflow_run") == 0
          && System.currentTimeMillis() < deadline) {
        Thread.sleep(100);
      }
      Topics again = WorkflowClient.connect(url).topics();
      List<String> types = new ArrayList<>();
      for (int i = 4; i <= 8; i++) {
        again.publish("clicks.cart", Map.of("n", i)).forEach(d -> types.add(d.type()));
      }
      assertThat(types).containsExactly("batched", "batched", "batched", "batched", "workflow");
    } finally {
      first.destroyForcibly();
      if (second != null) {
        ChildJvm.kill(second);
      }
    }
    assertThat(inputs(db))
        .containsExactly(
            "[{\"n\": 1}, {\"n\": 2}, {\"n\": 3}]",
            "[{\"n\": 4}, {\"n\": 5}, {\"n\": 6}, {\"n\": 7}, {\"n\": 8}]");
    assertThat(count(db, "SELECT count(*) FROM queue.batch_item")).isZero();
  }

  private static long count(TestDatabase db, String sql) throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static List<String> inputs(TestDatabase db) throws Exception {
    List<String> out = new ArrayList<>();
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT input::text FROM queue.workflow_run ORDER BY run_id")) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }
}
