package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Concurrency limits, rate limits, rate-limited steps and priorities, seen from real workers of a
 * real server.
 */
class FlowControlTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  private static void awaitAll(String workflow, List<Long> runs) {
    for (long run : runs) {
      server.client().runs().awaitResult(workflow, run, Integer.class, Duration.ofSeconds(60));
    }
  }

  @Test
  void noMoreThanTheLimitOfAKeysRunsRunAtOnce() {
    AtomicInteger running = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    Workflow<Integer, Integer> wf =
        Workflow.define("limited", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  ctx.step()
                      .run(
                          "work",
                          Integer.class,
                          () -> {
                            most.accumulateAndGet(running.incrementAndGet(), Math::max);
                            Thread.sleep(10);
                            running.decrementAndGet();
                            return n;
                          });
                  return ctx.step().run("more", Integer.class, () -> n);
                });
    server.client().workflows().setConcurrencyLimit("limited", 3);
    List<Long> runs = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      runs.add(
          server
              .client()
              .start(wf, i, StartOptions.builder().concurrencyKey("customer-42").build())
              .runId());
    }
    server.serve(
        wf, WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)).concurrency(16));
    server.serve(
        wf, WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)).concurrency(16));
    awaitAll("limited", runs);
    assertThat(most.get()).as("runs of the key in a step at once").isBetween(2, 3);
  }

  @Test
  void aSleepingRunFreesItsSlot() {
    List<String> order = new CopyOnWriteArrayList<>();
    Workflow<Integer, Integer> wf =
        Workflow.define("one-at-once", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  ctx.step().run("before", Integer.class, () -> order.add(n + ":before") ? n : n);
                  ctx.step().sleep("nap", Duration.ofMillis(1500));
                  return ctx.step()
                      .run("after", Integer.class, () -> order.add(n + ":after") ? n : n);
                });
    server.client().workflows().setConcurrencyLimit("one-at-once", 1);
    long a =
        server.client().start(wf, 1, StartOptions.builder().concurrencyKey("k").build()).runId();
    long b =
        server.client().start(wf, 2, StartOptions.builder().concurrencyKey("k").build()).runId();
    server.serve(wf);
    awaitAll("one-at-once", List.of(a, b));
    RunInfo first = server.client().runs().get("one-at-once", a);
    assertThat(first.concurrencyKey()).isEqualTo("k");
    assertThat(first.priority()).isNull();
    assertThat(order.indexOf("2:before"))
        .as("the second run starts while the first sleeps: %s", order)
        .isLessThan(order.indexOf("1:after"));
  }

  @Test
  void aRateLimitedStepHoldsEveryRunOfItsKeyBackUntilTheReset() throws Exception {
    AtomicLong resetAt = new AtomicLong();
    List<Long> served = new CopyOnWriteArrayList<>();
    List<Long> refused = new CopyOnWriteArrayList<>();
    HttpServer api = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    api.createContext(
        "/",
        exchange -> {
          long now = System.currentTimeMillis();
          if (resetAt.compareAndSet(0, now + 2000) || now < resetAt.get()) {
            refused.add(now);
            exchange.getResponseHeaders().add("Retry-After", "2");
            exchange.sendResponseHeaders(429, -1);
          } else {
            served.add(now);
            exchange.sendResponseHeaders(200, -1);
          }
          exchange.close();
        });
    api.start();
    try {
      HttpClient http = HttpClient.newHttpClient();
      URI uri = URI.create("http://127.0.0.1:" + api.getAddress().getPort() + "/");
      Workflow<Integer, Integer> wf =
          Workflow.define("calls-api", Integer.class, Integer.class)
              .run(
                  (ctx, n) ->
                      ctx.step()
                          .run(
                              "call",
                              Integer.class,
                              () -> {
                                HttpResponse<Void> r =
                                    http.send(
                                        HttpRequest.newBuilder(uri).build(),
                                        HttpResponse.BodyHandlers.discarding());
                                if (r.statusCode() == 429) {
                                  long seconds =
                                      Long.parseLong(r.headers().firstValue("Retry-After").get());
                                  throw new RateLimited(Duration.ofSeconds(seconds));
                                }
                                return n;
                              }));
      List<Long> runs = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        runs.add(
            server
                .client()
                .start(wf, i, StartOptions.builder().concurrencyKey("api").build())
                .runId());
      }
      server.serve(
          wf, WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)).concurrency(1));
      awaitAll("calls-api", runs);
      assertThat(refused).as("the one call refused").hasSize(1);
      assertThat(served).hasSize(5);
      assertThat(Collections.min(served))
          .as("no call of the key before the reset")
          .isGreaterThanOrEqualTo(resetAt.get());
      for (long run : runs) {
        assertThat(server.client().runs().steps("calls-api", run))
            .as("a rate-limited delivery is not an attempt")
            .extracting(StepInfo::attempts)
            .containsExactly(1);
      }
    } finally {
      api.stop(0);
    }
  }

  @Test
  void aRateLimitLetsThroughItsTokensPerPeriod() {
    List<Long> at = new CopyOnWriteArrayList<>();
    Workflow<Integer, Integer> wf =
        Workflow.define("metered", Integer.class, Integer.class)
            .run(
                (ctx, n) ->
                    ctx.step()
                        .run(
                            "call",
                            Integer.class,
                            () -> {
                              at.add(System.currentTimeMillis());
                              return n;
                            }));
    server.client().rateLimits().set("five-a-second", 5, Duration.ofSeconds(1));
    List<Long> runs = new ArrayList<>();
    for (int i = 0; i < 15; i++) {
      runs.add(
          server
              .client()
              .start(wf, i, StartOptions.builder().concurrencyKey("five-a-second").build())
              .runId());
    }
    server.serve(wf);
    awaitAll("metered", runs);
    List<Long> sorted = new ArrayList<>(at);
    Collections.sort(sorted);
    // A full bucket of 5, then 5 a second: the 15th no sooner than 2 s after the first.
    assertThat(sorted.get(14) - sorted.get(0)).isGreaterThanOrEqualTo(1800);
    for (int i = 10; i < sorted.size(); i++) {
      assertThat(sorted.get(i) - sorted.get(i - 10))
          .as("at most 10 calls (the bucket and a second's refill) within a second")
          .isGreaterThanOrEqualTo(900);
    }
  }

  @Test
  void higherPrioritiesGoFirstAndALowThatWaitedLongerGoesAhead() throws Exception {
    List<Integer> order = new CopyOnWriteArrayList<>();
    Workflow<Integer, Integer> wf =
        Workflow.define("prioritised", Integer.class, Integer.class)
            .run((ctx, n) -> ctx.step().run("s", Integer.class, () -> order.add(n) ? n : n));
    List<Long> runs = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      runs.add(server.client().start(wf, i).runId());
    }
    for (int i = 100; i < 150; i++) {
      runs.add(server.client().start(wf, i, StartOptions.builder().priority(9).build()).runId());
    }
    // Low run 0 has waited ten minutes: more than nine levels' worth, so it goes before the highs.
    try (Connection c = server.database().connect();
        PreparedStatement s =
            c.prepareStatement(
                "UPDATE queue.q___wf_prioritised SET vt = vt - interval '10 minutes'"
                    + " WHERE group_id = ?")) {
      s.setString(1, Long.toString(runs.get(0)));
      assertThat(s.executeUpdate()).isEqualTo(1);
    }
    server.serve(
        wf,
        WorkerOptions.url(server.url())
            .pollWait(Duration.ofSeconds(1))
            .concurrency(1)
            .taskStream(false));
    awaitAll("prioritised", runs);
    assertThat(order.get(0)).as("the low that waited longest").isEqualTo(0);
    assertThat(order.subList(1, 51)).as("then every high").allMatch(n -> n >= 100);
    assertThat(order.subList(51, 100)).as("then the other lows").allMatch(n -> n < 100);
    assertThat(server.client().runs().get("prioritised", runs.get(50)).priority()).isEqualTo(9);
  }
}
