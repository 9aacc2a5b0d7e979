package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.engine.internal.runtime.Wakeups;
import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.LogCapture;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkflowClient;
import dev.pgworkflows.workflows.testing.FaultProxy;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Network faults between the server and PostgreSQL (the server's JDBC URL points at a {@link
 * FaultProxy}) under a steady load of starts, steps, sleeps and signals: added latency, a bandwidth
 * limit, every connection reset, a blackhole, delayed FINs, each healed in turn. Nothing
 * acknowledged is lost, every run finishes within {@link #FINISH_BOUND} of healing, a request
 * during the blackhole answers 503 within the configured timeouts instead of hanging, the LISTEN
 * connection's check finds the blackhole out, and afterwards the pool and LISTEN serve again.
 */
@Tag("reliability")
class PostgresNetworkFaultsTest {
  /**
   * What docs/guarantees.md promises after healing: lease (2 s) + a step (2.5 s) + backoff, with
   * room.
   */
  static final Duration FINISH_BOUND = Duration.ofSeconds(30);

  /** Pool wait (5 s, the pool's own validation within it) + socket timeout (3 s) + slack. */
  static final long REQUEST_BOUND_MS = 10_000;

  @Test
  void faultsBetweenServerAndPostgresLoseNothingAndEverythingRecoversAfterHealing(@TempDir Path dir)
      throws Exception {
    TestDatabase db = TestDatabase.fresh();
    URI pg = URI.create(db.jdbcUrl().substring("jdbc:".length()));
    Path log = dir.resolve("holds.log");
    NetworkFaults figures = new NetworkFaults("server to PostgreSQL");
    try (LogCapture listener = LogCapture.of(Wakeups.class);
        FaultProxy proxy = FaultProxy.to(pg.getHost(), pg.getPort());
        TestServer server =
            TestServer.start(
                new TestDatabase(
                    db.name(),
                    db.jdbcUrl().replace(":" + pg.getPort() + "/", ":" + proxy.port() + "/"),
                    db.user(),
                    db.password()),
                Map.of(
                    "WORKFLOWS_FALLBACK_POLL_MS", "500",
                    "WORKFLOWS_DB_STATEMENT_TIMEOUT_MS", "2000",
                    "WORKFLOWS_DB_SOCKET_TIMEOUT_MS", "3000"))) {
      Api api = server.api();
      WorkflowClient client = WorkflowClient.connect(server.url());
      api.put("/v1/queues/waiting", null);
      try (FaultWorkload load = new FaultWorkload(client)) {
        final long threadsBefore;
        Worker worker = FaultWorkflow.define(log).serve(FaultWorkflow.options(server.url()));
        try {
          Thread.sleep(3_000);
          threadsBefore = NetworkFaults.liveThreads();

          proxy.latency(Duration.ofMillis(30));
          healAndCheck(figures, "latency 30 ms per chunk", proxy, load, client, 4_000);
          proxy.bandwidth(50_000);
          healAndCheck(figures, "bandwidth 50 kB/s", proxy, load, client, 4_000);
          proxy.reset();
          healAndCheck(figures, "every connection reset", proxy, load, client, 2_000);
          proxy.slowClose(Duration.ofSeconds(2));
          healAndCheck(figures, "FIN delayed 2 s", proxy, load, client, 4_000);

          // A poll that waits across the blackhole: its first receive (an empty queue) takes a few
          // milliseconds, then it waits in Java, holding no connection. A poll whose receive met
          // the
          // blackhole would answer 503, which is told apart below.
          long pollIssued = System.currentTimeMillis();
          CompletableFuture<Api.Response> waiting =
              CompletableFuture.supplyAsync(
                  () -> api.post("/v1/queues/waiting/messages/receive", Map.of("waitSeconds", 30)));
          Thread.sleep(1_000);
          assertThat(waiting).as("the poll is waiting").isNotDone();
          long blackholed = System.currentTimeMillis();
          proxy.blackhole();
          long t0 = System.nanoTime();
          Api.Response during = api.get("/v1/workflows/" + FaultWorkflow.NAME + "/runs/1");
          long answeredMs = (System.nanoTime() - t0) / 1_000_000;
          assertThat(during.status()).isEqualTo(503);
          assertThat(during.isProblem()).isTrue();
          assertThat(answeredMs).isLessThan(REQUEST_BOUND_MS);
          // The LISTEN connection's check finds the silence out: at worst 5 s idle (a check that
          // passed just before the blackhole) + 1 s (the notification wait in hand) + 5 s for the
          // check to answer = 11 s; 15 s leaves room for a loaded machine. Only failures after the
          // blackhole count (an earlier phase may have cut the connection too), and /readyz says
          // so.
          Awaitility.await()
              .atMost(20, TimeUnit.SECONDS)
              .until(() -> lostListenAfter(listener, blackholed) >= 0);
          long lostListenMs = lostListenAfter(listener, blackholed) - blackholed;
          assertThat(lostListenMs).isLessThan(15_000);
          Awaitility.await()
              .atMost(20, TimeUnit.SECONDS)
              .until(() -> !api.withToken(null).get("/readyz").json().get("listening").asBoolean());
          proxy.heal();
          long held = System.currentTimeMillis() - blackholed;
          Awaitility.await()
              .atMost(20, TimeUnit.SECONDS)
              .until(() -> api.withToken(null).get("/readyz").status() == 200);
          Awaitility.await()
              .atMost(20, TimeUnit.SECONDS)
              .until(() -> api.withToken(null).get("/readyz").json().get("listening").asBoolean());
          api.post("/v1/queues/waiting/messages", Map.of("body", "after healing"));
          long sentAfterMs = System.currentTimeMillis() - pollIssued;
          Api.Response woke = waiting.get(20, TimeUnit.SECONDS);
          // The awaits above are bounded one by one, and together may outlast the poll's 30 s (the
          // longest a poll waits): then it answered empty before the send, and says nothing.
          assertThat(sentAfterMs)
              .as(
                  "the send came %d ms after the poll began, past its 30 s wait: the blackhole and"
                      + " the recovery took too long for the poll to prove it wakes",
                  sentAfterMs)
              .isLessThan(29_000);
          assertThat(woke.status())
              .as("the poll answered %d: it met the blackhole before it was waiting", woke.status())
              .isEqualTo(200);
          assertThat(woke.json().get("messages")).hasSize(1);
          check(
              figures,
              "blackhole (a request answered 503 in "
                  + answeredMs
                  + " ms; LISTEN found dead after "
                  + lostListenMs
                  + " ms)",
              held,
              load,
              client);

          load.stop();
          load.awaitFinished(load.acknowledged(), FINISH_BOUND);
          load.assertNothingLost();
        } finally {
          worker.close();
        }
        assertThat(NetworkFaults.threadsNamed("pg-listener")).isEqualTo(1);
        Awaitility.await()
            .atMost(30, TimeUnit.SECONDS)
            .until(() -> NetworkFaults.liveThreads() <= threadsBefore + 10);
        figures.print();
        System.out.printf(
            "server to PostgreSQL: %d runs acknowledged, 0 lost, %d refusals retried; live threads"
                + " %d before the faults, %d after%n",
            load.acknowledged().size(),
            load.refusals(),
            threadsBefore,
            NetworkFaults.liveThreads());
      }
    }
  }

  /** When the LISTEN connection first failed its check at or after {@code since}; -1 not yet. */
  private static long lostListenAfter(LogCapture listener, long since) {
    return listener.events().stream()
        .filter(e -> e.getTimeStamp() >= since)
        .filter(e -> e.getFormattedMessage().contains("did not answer a check"))
        .mapToLong(e -> e.getTimeStamp())
        .min()
        .orElse(-1);
  }

  /**
   * Holds the fault switched on a moment, heals it, then waits for every run acknowledged so far to
   * finish and for a run started now to be taken promptly.
   */
  static void healAndCheck(
      NetworkFaults figures,
      String fault,
      FaultProxy proxy,
      FaultWorkload load,
      WorkflowClient client,
      long holdMs)
      throws InterruptedException {
    long t0 = System.currentTimeMillis();
    Thread.sleep(holdMs);
    proxy.heal();
    check(figures, fault, System.currentTimeMillis() - t0, load, client);
  }

  /** Every run acknowledged so far finishes in time, and a run started now is taken promptly. */
  static void check(
      NetworkFaults figures, String fault, long held, FaultWorkload load, WorkflowClient client)
      throws InterruptedException {
    var acked = load.acknowledged();
    long finished = load.awaitFinished(acked, FINISH_BOUND);
    figures.row(fault, held, acked.size(), finished, probe(client));
  }

  /** How long a run started now takes to have its first step journaled (bounded at 5 s). */
  static long probe(WorkflowClient client) {
    long t0 = System.nanoTime();
    long id = client.start(FaultWorkflow.NAME, 0).runId();
    Awaitility.await()
        .atMost(5, TimeUnit.SECONDS)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> !client.runs().steps(FaultWorkflow.NAME, id).isEmpty());
    long ms = (System.nanoTime() - t0) / 1_000_000;
    client.signal(FaultWorkflow.NAME, id, "go", new FaultWorkflow.Go(0));
    return ms;
  }
}
