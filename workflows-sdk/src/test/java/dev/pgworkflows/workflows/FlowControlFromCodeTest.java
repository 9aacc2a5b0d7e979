package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Flow control given in code and carried further: a definition's concurrency limit set by its
 * workers, a key's own limit, a child's key, priority and deadline, a start's deadline at a time,
 * and a rate-limited branch of a parallel group; seen from real workers of a real server.
 */
class FlowControlFromCodeTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static String get(String path) {
    return server.api().get(path).body();
  }

  @Test
  void aKeysOwnLimitHoldsForItWhileTheLimitFromCodeHoldsForTheOthers() throws Exception {
    ConcurrentHashMap<String, AtomicInteger> running = new ConcurrentHashMap<>();
    ConcurrentHashMap<String, AtomicInteger> most = new ConcurrentHashMap<>();
    Workflow<String, String> wf =
        Workflow.define("split", String.class, String.class)
            .concurrency(3)
            .run(
                (ctx, key) ->
                    ctx.step()
                        .run(
                            "work",
                            String.class,
                            () -> {
                              int now =
                                  running
                                      .computeIfAbsent(key, k -> new AtomicInteger())
                                      .incrementAndGet();
                              most.computeIfAbsent(key, k -> new AtomicInteger())
                                  .accumulateAndGet(now, Math::max);
                              Thread.sleep(50);
                              running.get(key).decrementAndGet();
                              return key;
                            }));
    server.client().workflows().setKeyConcurrencyLimit("split", "a", 1);
    List<Long> runs = new ArrayList<>();
    for (int i = 0; i < 15; i++) {
      runs.add(
          server
              .client()
              .start(wf, "a", StartOptions.builder().concurrencyKey("a").build())
              .runId());
      runs.add(
          server
              .client()
              .start(wf, "b", StartOptions.builder().concurrencyKey("b").build())
              .runId());
    }
    server.serve(
        wf, WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)).concurrency(16));
    assertThat(get("/v1/workflows/split/concurrency"))
        .as("the worker set its definition's limit")
        .contains("\"limit\":3");
    for (long run : runs) {
      server.client().runs().awaitResult("split", run, String.class, Duration.ofSeconds(60));
    }
    assertThat(most.get("a").get()).as("runs of key a at once").isEqualTo(1);
    assertThat(most.get("b").get()).as("runs of key b at once").isBetween(2, 3);

    server.client().workflows().setKeyConcurrencyLimit("split", "a", null);
    assertThat(get("/v1/workflows/split/concurrency/a")).contains("no concurrency limit");
  }

  @Test
  void aChildCarriesItsKeyAndPriorityAndIsTimedOutAtItsDeadline() {
    Workflow<String, String> kid =
        Workflow.define("slow-kid", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().waitForAny("never", null, Arm.event("never"));
                  return in;
                });
    Workflow<String, String> parent =
        Workflow.define("impatient", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ChildRun<String> c =
                      ctx.step()
                          .startChild(
                              "kid",
                              kid,
                              in,
                              ChildOptions.builder()
                                  .concurrencyKey("tenant-1")
                                  .priority(2)
                                  .deadline(Duration.ofMillis(500))
                                  .build());
                  try {
                    return c.result();
                  } catch (ChildFailedException e) {
                    return "child " + e.status();
                  }
                });
    server.serve(kid);
    server.serve(parent);
    long run = server.client().start(parent, "x").runId();
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("impatient", run, String.class, Duration.ofSeconds(30)))
        .isEqualTo("child TIMED_OUT");
    RunInfo child =
        server.client().runs().list("slow-kid", RunStatus.TIMED_OUT, null, 10).runs().get(0);
    assertThat(child.concurrencyKey()).isEqualTo("tenant-1");
    assertThat(child.priority()).isEqualTo(2);
    assertThat(child.error().get("type").asText()).isEqualTo("DeadlineExceeded");
  }

  @Test
  void aRunPastItsDeadlineTimeIsTimedOutWithNoWorker() {
    Instant deadline = Instant.now().plusMillis(800);
    Started s =
        server.client().start("unserved", "x", StartOptions.builder().deadlineAt(deadline).build());
    RunInfo started = server.client().runs().get("unserved", s.runId());
    assertThat(Duration.between(deadline, started.deadlineAt()).abs())
        .isLessThan(Duration.ofMillis(1));
    assertThatThrownBy(
            () ->
                server
                    .client()
                    .runs()
                    .awaitResult("unserved", s.runId(), String.class, Duration.ofSeconds(20)))
        .isInstanceOf(WorkflowFailedException.class);
    RunInfo ended = server.client().runs().get("unserved", s.runId());
    assertThat(ended.status()).isEqualTo(RunStatus.TIMED_OUT);
    assertThat(ended.completedAt()).isAfterOrEqualTo(deadline);
    assertThatThrownBy(
            () ->
                server
                    .client()
                    .start(
                        "unserved",
                        "x",
                        StartOptions.builder().deadlineAt(Instant.now().minusSeconds(1)).build()))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("deadlineAt");
  }

  @Test
  void aRateLimitedBranchHoldsItsKeyBackAndOnlyItRunsAgain() throws Exception {
    AtomicLong resetAt = new AtomicLong();
    List<Long> served = new CopyOnWriteArrayList<>();
    List<Long> refused = new CopyOnWriteArrayList<>();
    AtomicInteger local = new AtomicInteger();
    HttpServer api = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    api.createContext(
        "/",
        exchange -> {
          long now = System.currentTimeMillis();
          if (resetAt.compareAndSet(0, now + 1500) || now < resetAt.get()) {
            refused.add(now);
            exchange.getResponseHeaders().add("Retry-After", "1500");
            exchange.sendResponseHeaders(429, -1);
          } else {
            served.add(now);
            exchange.sendResponseHeaders(200, -1);
          }
          exchange.close();
        });
    api.start();
    try {
      URI uri = URI.create("http://127.0.0.1:" + api.getAddress().getPort() + "/");
      Workflow<Integer, Integer> wf =
          Workflow.define("parallel-calls", Integer.class, Integer.class)
              .run(
                  (ctx, n) -> {
                    List<Integer> both =
                        ctx.step()
                            .parallel(
                                List.of(
                                    Branch.of(
                                        "call",
                                        Integer.class,
                                        () -> {
                                          HttpResponse<Void> r =
                                              HTTP.send(
                                                  HttpRequest.newBuilder(uri).build(),
                                                  HttpResponse.BodyHandlers.discarding());
                                          if (r.statusCode() == 429) {
                                            throw new RateLimited(
                                                Duration.ofMillis(
                                                    Long.parseLong(
                                                        r.headers()
                                                            .firstValue("Retry-After")
                                                            .get())));
                                          }
                                          return n;
                                        }),
                                    Branch.of("local", Integer.class, local::incrementAndGet)));
                    return both.get(0);
                  });
      List<Long> runs = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        runs.add(
            server
                .client()
                .start(wf, i, StartOptions.builder().concurrencyKey("papi").build())
                .runId());
      }
      server.serve(
          wf, WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)).concurrency(1));
      for (long run : runs) {
        server
            .client()
            .runs()
            .awaitResult("parallel-calls", run, Integer.class, Duration.ofSeconds(60));
      }
      assertThat(refused).as("the one call refused").hasSize(1);
      assertThat(served).hasSize(3);
      assertThat(Collections.min(served))
          .as("no call of the key before the reset")
          .isGreaterThanOrEqualTo(resetAt.get());
      assertThat(local.get()).as("the sibling branch ran once per run").isEqualTo(3);
      for (long run : runs) {
        assertThat(server.client().runs().steps("parallel-calls", run))
            .as("a rate-limited branch is not an attempt")
            .allMatch(s -> s.attempts() == 1);
      }
    } finally {
      api.stop(0);
    }
  }
}
