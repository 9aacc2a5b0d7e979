package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.Schedule;
import dev.pgworkflows.workflows.WorkflowClient;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A schedule ticking every second (a minute of a server clock running sixty times as fast) while
 * its server process is SIGKILLed and, seconds later, started again: with catch-up "all" every tick
 * of the timeline, those missed while no server ran included, started exactly one run.
 */
@Tag("reliability")
class ScheduleAcrossServerKillTest {
  private static final long SPEED = 60;

  @Test
  void catchUpAllStartsOneRunPerTickAcrossAKill(@TempDir Path dir) throws Exception {
    TestDatabase db = TestDatabase.fresh();
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Map<String, String> env =
        Map.of(
            "WORKFLOWS_PORT", Integer.toString(port),
            "DATABASE_URL", db.jdbcUrl(),
            "WORKFLOWS_DATABASE_USER", db.user(),
            "WORKFLOWS_DATABASE_PASSWORD", db.password(),
            "WORKFLOWS_DB_POOL_SIZE", "4",
            "WORKFLOWS_SCHEDULE_INTERVAL_MS", "100");
    String url = "http://localhost:" + port;
    long base = System.currentTimeMillis();
    Process first = start(dir.resolve("first.out"), env, url, base);
    Instant killedAt;
    Process second = null;
    try {
      WorkflowClient client = WorkflowClient.connect(url);
      client
          .schedules()
          .create(
              "ticked",
              Schedule.cron("* * * * *").name("every-second").catchUp(Schedule.CatchUp.ALL));
      Thread.sleep(6_000);
      ChildJvm.kill(first);
      killedAt = serverTime(base);
      Thread.sleep(5_000);
      second = start(dir.resolve("second.out"), env, url, base);
      Thread.sleep(6_000);
      client.schedules().pause("every-second");
    } finally {
      first.destroyForcibly();
      if (second != null) {
        ChildJvm.kill(second);
      }
    }

    List<Instant> ticks = new ArrayList<>();
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT idempotency_key FROM queue.workflow_run WHERE workflow_name = 'ticked'"
                    + " ORDER BY idempotency_key")) {
      while (rs.next()) {
        String key = rs.getString(1);
        assertThat(key).startsWith("__schedule/every-second/");
        ticks.add(Instant.parse(key.substring("__schedule/every-second/".length())));
      }
    }
    System.out.printf(
        "schedule across a server kill: %d ticks, %d runs, first %s, last %s, killed at %s%n",
        ticks.stream().distinct().count(),
        ticks.size(),
        ticks.get(0),
        ticks.get(ticks.size() - 1),
        killedAt);
    assertThat(ticks).as("ticks started").hasSizeGreaterThanOrEqualTo(12);
    assertThat(ticks).as("one run per tick").doesNotHaveDuplicates();
    for (int i = 1; i < ticks.size(); i++) {
      assertThat(Duration.between(ticks.get(i - 1), ticks.get(i)))
          .as("no tick missed after %s", ticks.get(i - 1))
          .isEqualTo(Duration.ofMinutes(1));
    }
    Instant killed = killedAt;
    assertThat(ticks)
        .as("ticks of the time no server ran were caught up")
        .anyMatch(t -> t.isAfter(killed.plusSeconds(60)) && t.isBefore(killed.plusSeconds(240)));
  }

  /** The servers' shared timeline, now. */
  private static Instant serverTime(long base) {
    return Instant.ofEpochMilli(base + (System.currentTimeMillis() - base) * SPEED);
  }

  private static Process start(Path out, Map<String, String> env, String url, long base)
      throws Exception {
    Process p =
        ChildJvm.start(FastClockServer.class, out, env, Long.toString(base), Long.toString(SPEED));
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    long deadline = System.currentTimeMillis() + 60_000;
    while (System.currentTimeMillis() < deadline) {
      try {
        if (http.send(
                    HttpRequest.newBuilder(URI.create(url + "/readyz")).build(),
                    HttpResponse.BodyHandlers.discarding())
                .statusCode()
            == 200) {
          return p;
        }
      } catch (java.io.IOException e) {
        // not up yet
      }
      if (!p.isAlive()) {
        throw new IllegalStateException("the server ended; see " + out);
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("the server did not start; see " + out);
  }
}
