package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A bulk cancel of 10,000 runs whose server is SIGKILLed part way: the next server goes on from the
 * job's last committed page, and each run is cancelled once (no run's outcome is recorded twice,
 * and none is skipped as already cancelled).
 */
@Tag("reliability")
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class BulkCancelAcrossServerKillTest {
  private static final int RUNS = 10_000;

  @Test
  void aBulkCancelInterruptedBySigkillFinishesOnTheNextServerCancellingEachRunOnce(
      @TempDir Path dir) throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      for (int i = 0; i < RUNS / 100; i++) {
        s.execute(
            "SELECT count(*) FROM queue.workflow_start_batch('bulk-order', (SELECT"
                + " jsonb_agg(jsonb_build_object('input', g)) FROM generate_series(1, 100) g))");
      }
    }
    int port = ServerJvms.freePort();
    Map<String, String> env = new java.util.HashMap<>(ServerJvms.env(db, port));
    // Bulk operations are an operator's: they take a token with scope admin.
    env.put("WORKFLOWS_API_TOKENS", "ops:admin,read=ops-token");
    String url = "http://localhost:" + port;
    Process first = ServerJvms.current(dir.resolve("first.out"), env);
    Process second = null;
    try {
      ChildJvm.awaitReady(url, dir.resolve("first.out"));
      HttpResponse<String> made =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(url + "/v1/batches"))
                      .header("Content-Type", "application/json")
                      .header("Authorization", "Bearer ops-token")
                      .POST(
                          HttpRequest.BodyPublishers.ofString(
                              "{\"action\": \"cancel\", \"query\": \"workflow = 'bulk-order' AND"
                                  + " status = 'running'\", \"ratePerSecond\": 500,"
                                  + " \"confirm\": true}"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(made.statusCode()).as(made.body()).isEqualTo(201);
      assertThat(made.body()).contains("\"selected\":" + RUNS);

      await(db, "SELECT done >= 2000 FROM queue.bulk_operation", 60);
      ChildJvm.kill(first);
      long doneAtKill = count(db, "SELECT done FROM queue.bulk_operation");
      assertThat(doneAtKill).isLessThan(RUNS);
      assertThat(count(db, "SELECT count(*) FROM queue.workflow_run WHERE status = 'cancelled'"))
          .isEqualTo(doneAtKill);

      second = ServerJvms.current(dir.resolve("second.out"), env);
      ChildJvm.awaitReady(url, dir.resolve("second.out"));
      await(db, "SELECT status = 'completed' FROM queue.bulk_operation", 120);
      System.out.printf(
          "bulk cancel of %d runs: %d done when the first server was killed, the rest on the"
              + " next%n",
          RUNS, doneAtKill);
    } finally {
      first.destroyForcibly();
      if (second != null) {
        ChildJvm.kill(second);
      }
    }
    assertThat(count(db, "SELECT count(*) FROM queue.workflow_run WHERE status = 'cancelled'"))
        .isEqualTo(RUNS);
    assertThat(count(db, "SELECT count(*) FROM queue.bulk_operation_run WHERE outcome = 'done'"))
        .isEqualTo(RUNS);
    assertThat(count(db, "SELECT count(*) FROM queue.bulk_operation_run")).isEqualTo(RUNS);
    assertThat(count(db, "SELECT done FROM queue.bulk_operation WHERE skipped = 0 AND failed = 0"))
        .isEqualTo(RUNS);
  }

  private static void await(TestDatabase db, String condition, int seconds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!bool(db, condition)) {
      assertThat(System.nanoTime()).as("waiting for %s", condition).isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  private static boolean bool(TestDatabase db, String sql) throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() && rs.getBoolean(1);
    }
  }

  private static long count(TestDatabase db, String sql) throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
