package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.testing.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Another client takes every connection PostgreSQL allows for 20 s under a steady load, and each
 * one that frees up, while the server's own sessions are ended every 3 s, so it needs new
 * connections and can seldom have them. Starts are then answered 503 problem+json within the pool's
 * wait for a connection (5 s) and never hang; no acknowledged start is lost; and once the other
 * client lets go, the server serves as before ({@link PressureCell}).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Tag("reliability")
class ConnectionLimitTest {
  /** The pool's wait for a connection ({@code Pool}), plus the answer's way back. */
  private static final long ANSWER_WITHIN_MS = 5_000 + 1_500;

  /**
   * The SDK's start: the client shares sends between concurrent starts, so a start may wait for the
   * send going out as it arrives, then for its own, and (when its own went out before the database
   * went away) for one more it makes for the callers behind it.
   */
  private static final long SDK_ANSWER_WITHIN_MS = 3 * 5_000 + 1_500;

  private static final String HOG = "connection-hog";

  /** HikariCP's longest back-off between tries to open a connection, plus a start's answer. */
  private static final long RECOVERED_WITHIN_MS = 5_000 + ANSWER_WITHIN_MS;

  @Test
  void connectionsTakenByAnotherClientAnswer503PromptlyAndRecover(@TempDir Path dir)
      throws Exception {
    List<HttpResponse<String>> refusals = new ArrayList<>();
    List<Long> refusalMs = new ArrayList<>();
    int[] taken = new int[1];
    PressureCell.Result r =
        PressureCell.run(
            dir,
            "connection limit taken by another client",
            Duration.ofSeconds(15),
            Duration.ofSeconds(20),
            Duration.ofSeconds(20),
            new PressureCell.Disturbance() {
              private final List<Connection> hogs = new CopyOnWriteArrayList<>();
              private final AtomicBoolean hogging = new AtomicBoolean(true);
              private Thread hog;

              @Override
              public void begin(PressureCell.Target target) throws Exception {
                TestDatabase db = target.db();
                String url =
                    db.jdbcUrl()
                        + (db.jdbcUrl().contains("?") ? "&" : "?")
                        + "ApplicationName="
                        + HOG;
                hog = new Thread(() -> hog(db, url), "connection-hog");
                hog.start();
                while (hogs.isEmpty() || !full) {
                  Thread.sleep(50);
                }
                taken[0] = hogs.size();
                probe(target.serverUrl(), refusals, refusalMs);
              }

              private volatile boolean full;

              /**
               * Takes every connection PostgreSQL has left, and each one that frees up after; every
               * 3 s ends the server's sessions (as an administrator or a pooler might), whose slots
               * it then races the server for.
               */
              private void hog(TestDatabase db, String url) {
                long nextTermination = 0;
                while (hogging.get()) {
                  try {
                    hogs.add(DriverManager.getConnection(url, db.user(), db.password()));
                    continue;
                  } catch (SQLException e) {
                    if (!"53300".equals(e.getSQLState())) {
                      throw new IllegalStateException(e);
                    }
                    full = true;
                  }
                  if (System.nanoTime() > nextTermination) {
                    try (Statement s = hogs.get(0).createStatement()) {
                      s.execute(
                          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                              + " WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"
                              + " AND application_name NOT IN ('"
                              + HOG
                              + "', '"
                              + PressureCell.APPLICATION_NAME
                              + "')");
                    } catch (SQLException e) {
                      throw new IllegalStateException(e);
                    }
                    nextTermination = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                  }
                }
              }

              @Override
              public void end() throws Exception {
                hogging.set(false);
                hog.join();
                for (Connection c : hogs) {
                  c.close();
                }
              }
            });
    System.out.printf(
        "connection limit taken by another client: %d connections taken; direct starts refused"
            + " %d times, in %s ms%n",
        taken[0], refusals.size(), refusalMs);
    assertThat(taken[0]).as("connections the other client took").isGreaterThan(50);
    assertThat(refusals).as("direct starts refused while the slots were taken").isNotEmpty();
    for (HttpResponse<String> answer : refusals) {
      assertThat(answer.headers().firstValue("Content-Type").orElse(""))
          .startsWith("application/problem+json");
      assertThat(answer.body())
          .contains("\"status\":503")
          .contains("the database is unavailable; retry shortly")
          .doesNotContain("Exception")
          .doesNotContain("java.");
    }
    assertThat(refusalMs).allMatch(ms -> ms < ANSWER_WITHIN_MS);
    assertThat(SteadyStarts.onlyRetryable(r.refusals())).as("refused: %s", r.refusals()).isTrue();
    assertThat(r.refusals()).as("starts refused by the pressure cell's client").isNotEmpty();
    assertThat(r.phase("during").slowestStartMs())
        .as("the longest an SDK start waited for its answer")
        .isLessThan(SDK_ANSWER_WITHIN_MS);
    // Recovery: the pool opens connections again within its back-off (at most 5 s between tries),
    // and the runs started after that run as before.
    assertThat(r.refusedAfterMs())
        .as("a start was refused this long after the connections were let go")
        .isLessThan(RECOVERED_WITHIN_MS);
    PressureCell.Phase before = r.phase("before");
    PressureCell.Phase after = r.phase("after");
    assertThat(after.p99Ms()).isLessThan(Math.max(2 * before.p99Ms(), before.p99Ms() + 500));
  }

  /**
   * Starts a run directly, once a second for up to 12 s, keeping each refusal and how long it took
   * to come, until three have come.
   */
  private static void probe(String serverUrl, List<HttpResponse<String>> refusals, List<Long> ms)
      throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    HttpRequest start =
        HttpRequest.newBuilder(
                URI.create(serverUrl + "/v1/workflows/" + ScaleOutWorkflow.NAME + "/runs"))
            .header("Authorization", "Bearer " + TestServer.TOKEN)
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.ofString("{\"input\": 1}"))
            .build();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(12);
    while (refusals.size() < 3 && System.nanoTime() < deadline) {
      long t0 = System.nanoTime();
      HttpResponse<String> answer = http.send(start, HttpResponse.BodyHandlers.ofString());
      if (answer.statusCode() == 503) {
        refusals.add(answer);
        ms.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
      }
      Thread.sleep(1_000);
    }
  }
}
