package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The primary PostgreSQL dies under load and its synchronous standby is promoted. The server, on a
 * multi-host URL with {@code targetServerType=primary}, finds the new primary for its pool and its
 * LISTEN connection; every start and send it acknowledged before, during and after the failover is
 * on the new primary; every run finishes with each step journaled once; a poll waiting across the
 * failover wakes for a send after it; {@code /readyz} recovers.
 */
@Tag("reliability")
class FailoverTest {

  @Test
  void nothingAcknowledgedIsLostWhenTheSynchronousStandbyIsPromoted() throws Exception {
    try (ReplicatedPostgres pg = ReplicatedPostgres.start();
        TestServer server =
            TestServer.start(
                new TestDatabase("postgres", pg.multiHostJdbcUrl(), "postgres", ""), Map.of())) {
      Api api = server.api();
      WorkflowClient client = WorkflowClient.connect(server.url());
      Workflow<Integer, Integer> wf =
          Workflow.define("failover", Integer.class, Integer.class)
              .run(
                  (ctx, n) -> {
                    int a = ctx.step().run("a", Integer.class, () -> n + 1);
                    int b = ctx.step().run("b", Integer.class, () -> a + 1);
                    return ctx.step().run("c", Integer.class, () -> b + 1);
                  });
      try (Worker worker =
          wf.serve(
              WorkerOptions.url(server.url())
                  .pollWait(Duration.ofSeconds(2))
                  .lease(Duration.ofSeconds(5)))) {
        api.put("/v1/queues/acked", null);
        api.put("/v1/queues/waiting", null);

        // Each acknowledgement is filed under the phase its request began in: 0 before the kill,
        // 1 from the kill until /readyz answers 200 again, 2 after.
        Map<Long, Integer> runs = new ConcurrentHashMap<>();
        Map<Long, Integer> messages = new ConcurrentHashMap<>();
        AtomicLong killedAt = new AtomicLong();
        AtomicLong firstAckAfterKill = new AtomicLong();
        AtomicBoolean recovered = new AtomicBoolean();
        AtomicLong failed = new AtomicLong();
        Set<String> failures = ConcurrentHashMap.newKeySet();
        AtomicBoolean producing = new AtomicBoolean(true);
        Thread producer =
            new Thread(
                () -> {
                  for (int i = 0; producing.get(); i++) {
                    int phase = killedAt.get() == 0 ? 0 : recovered.get() ? 2 : 1;
                    try {
                      runs.put(client.start("failover", i).runId(), phase);
                      if (phase > 0) {
                        firstAckAfterKill.compareAndSet(0, System.nanoTime());
                      }
                    } catch (RuntimeException e) {
                      failures.add(e.getClass().getSimpleName()); // not acknowledged: not counted
                      failed.incrementAndGet();
                    }
                    try {
                      Api.Response r = api.post("/v1/queues/acked/messages", Map.of("body", i));
                      if (r.status() == 201) {
                        messages.put(r.json().get("ids").get(0).asLong(), phase);
                        if (phase > 0) {
                          firstAckAfterKill.compareAndSet(0, System.nanoTime());
                        }
                      } else {
                        failures.add("HTTP " + r.status());
                        failed.incrementAndGet();
                      }
                    } catch (RuntimeException e) {
                      failures.add(e.getClass().getSimpleName());
                      failed.incrementAndGet();
                    }
                    sleep(5);
                  }
                },
                "producer");
        producer.start();
        CompletableFuture<Api.Response> waiting;
        AtomicLong wokeAt = new AtomicLong();
        long receiveIssued;
        long sent;
        long kill;
        long noPrimary;
        long promoted;
        long ready;
        try {
          Thread.sleep(3_000);

          // A poll waiting across the failover (30 s, the most a receive waits), begun just before
          // the kill so that its wait covers the outage and the send after it.
          receiveIssued = System.nanoTime();
          waiting =
              CompletableFuture.supplyAsync(
                  () -> {
                    Api.Response r =
                        api.post("/v1/queues/waiting/messages/receive", Map.of("waitSeconds", 30));
                    wokeAt.set(System.nanoTime());
                    return r;
                  });
          // Its first attempt (one short query) done, it waits holding no connection; a kill during
          // that query would answer it 503 instead.
          Thread.sleep(1_000);
          pg.killPrimary();
          kill = System.nanoTime();
          killedAt.set(kill);
          // No primary for a while, as while failover tooling decides: /readyz says so (once the
          // pool has waited its connection timeout), and requests fail.
          assertThat(readyz(api)).isEqualTo(503);
          noPrimary = System.nanoTime();
          pg.promoteStandby();
          promoted = System.nanoTime();
          Awaitility.await()
              .atMost(30, TimeUnit.SECONDS)
              .pollInterval(Duration.ofMillis(50))
              .until(() -> api.withToken(null).get("/readyz").status() == 200);
          ready = System.nanoTime();
          recovered.set(true);
          // The LISTEN connection follows the new primary: it is there, listening; a send now
          // wakes the poll waiting since before the kill.
          Awaitility.await()
              .atMost(15, TimeUnit.SECONDS)
              .until(() -> listenerOn(pg.standbyJdbcUrl()));
          assertThat(
                  api.post("/v1/queues/waiting/messages", Map.of("body", "after the failover"))
                      .status())
              .isEqualTo(201);
          sent = System.nanoTime();
          Thread.sleep(3_000);
        } finally {
          producing.set(false);
          producer.join();
        }

        Api.Response woke;
        try {
          woke = waiting.get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
          throw new AssertionError(
              "the poll begun "
                  + ms(kill - receiveIssued)
                  + " ms before the kill had not answered "
                  + ms(System.nanoTime() - receiveIssued)
                  + " ms after it began (the send was "
                  + ms(sent - receiveIssued)
                  + " ms after it began)",
              e);
        }
        assertThat(woke.status())
            .as(
                "the poll began %d ms before the kill and answered after %d ms: %s",
                ms(kill - receiveIssued), ms(wokeAt.get() - receiveIssued), woke.body())
            .isEqualTo(200);
        assertThat(woke.json().get("messages"))
            .as(
                "the poll began %d ms before the kill and answered after %d ms; the send was %d ms"
                    + " after it began, and a poll waits 30 s at most",
                ms(kill - receiveIssued),
                ms(wokeAt.get() - receiveIssued),
                ms(sent - receiveIssued))
            .hasSize(1);

        // What a client sees meanwhile: the SDK's ServerUnavailableException for a start, a 503
        // problem for a send; never a 500 or an answer from a standby.
        assertThat(failures).containsOnly("ServerUnavailableException", "HTTP 503");
        assertThat(count(runs, 0)).as("starts acknowledged before the kill").isPositive();
        assertThat(count(runs, 2)).as("starts acknowledged after the failover").isPositive();
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .pollInterval(Duration.ofMillis(500))
            .until(
                () ->
                    runs.keySet().stream()
                        .allMatch(
                            id ->
                                client.runs().get("failover", id).status() == RunStatus.COMPLETED));
        for (long id : runs.keySet()) {
          List<StepInfo> steps = client.runs().steps("failover", id);
          assertThat(steps).extracting(StepInfo::name).containsExactly("a", "b", "c");
        }
        // Every run finished: nothing is left in the worker either.
        Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> worker.inFlight() == 0);
        assertThat(worker.inFlight()).isZero();

        Set<Long> found = new HashSet<>();
        while (true) {
          var got =
              api.post("/v1/queues/acked/messages/receive", Map.of("max", 100))
                  .json()
                  .get("messages");
          if (got.isEmpty()) {
            break;
          }
          got.forEach(m -> found.add(m.get("id").asLong()));
        }
        assertThat(found).containsAll(messages.keySet());
        assertThat(readyz(api)).isEqualTo(200);

        System.out.printf(
            "failover: /readyz 503 %d ms after the kill; promoted %d ms after the kill in %d ms;"
                + " first acknowledged request %d ms after the promotion (%d ms after the kill),"
                + " /readyz 200 after %d ms;"
                + " %d requests failed; acknowledged starts %d/%d/%d and sends %d/%d/%d"
                + " (before/during/after), lost 0%n",
            ms(noPrimary - kill),
            ms(promoted - kill),
            ms(promoted - noPrimary),
            ms(firstAckAfterKill.get() - promoted),
            ms(firstAckAfterKill.get() - kill),
            ms(ready - promoted),
            failed.get(),
            count(runs, 0),
            count(runs, 1),
            count(runs, 2),
            count(messages, 0),
            count(messages, 1),
            count(messages, 2));
      }
    }
  }

  /** Whether the server's LISTEN connection is on the database at {@code url}, listening. */
  private static boolean listenerOn(String url) throws Exception {
    try (Connection c = DriverManager.getConnection(url, "postgres", "");
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM pg_stat_activity"
                    + " WHERE application_name = 'pgworkflows-listener'"
                    + " AND query ILIKE 'LISTEN%'")) {
      rs.next();
      return rs.getInt(1) == 1;
    }
  }

  private static int readyz(Api api) {
    return api.withToken(null).get("/readyz").status();
  }

  private static long count(Map<Long, Integer> acked, int phase) {
    return acked.values().stream().filter(v -> v == phase).count();
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
