package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Start timing through the SDK against a live server: a delayed start runs when due, a run past its
 * deadline is timed out by the server and its running step sees the cancellation, debounced starts
 * collapse into one run.
 */
class StartTimingTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void aDelayedStartRunsOnlyOnceItIsDue() {
    Workflow<String, Long> wf =
        Workflow.define("delayed", String.class, Long.class)
            .run((ctx, in) -> System.currentTimeMillis());
    server.serve(wf);
    Instant before = Instant.now();
    Started s =
        server
            .client()
            .start(wf, "x", StartOptions.builder().delay(Duration.ofMillis(800)).build());
    RunInfo run = server.client().runs().get("delayed", s.runId());
    assertThat(run.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(run.dueAt()).isAfter(before.plusMillis(700));
    long ranAt =
        server
            .client()
            .runs()
            .awaitResult("delayed", s.runId(), Long.class, Duration.ofSeconds(20));
    assertThat(ranAt).isGreaterThanOrEqualTo(before.plusMillis(780).toEpochMilli());
  }

  @Test
  void aRunPastItsDefinitionsDeadlineIsTimedOutAndItsStepSeesTheCancellation() throws Exception {
    CountDownLatch stepStopped = new CountDownLatch(1);
    Workflow<String, String> wf =
        Workflow.define("deadlined", String.class, String.class)
            .deadline(Duration.ofMillis(600))
            .run(
                (ctx, in) ->
                    ctx.step()
                        .run(
                            "spin",
                            String.class,
                            () -> {
                              while (!ctx.cancellation().await(Duration.ofMillis(50))) {
                                // working until told to stop
                              }
                              stepStopped.countDown();
                              return "stopped";
                            }));
    server.serve(wf, WorkerOptions.url(server.url()).lease(Duration.ofSeconds(1)));
    Started s = server.client().start(wf, "x");
    assertThat(server.client().runs().get("deadlined", s.runId()).deadlineAt()).isNotNull();
    assertThatThrownBy(
            () ->
                server
                    .client()
                    .runs()
                    .awaitResult("deadlined", s.runId(), String.class, Duration.ofSeconds(30)))
        .isInstanceOf(WorkflowFailedException.class);
    RunInfo run = server.client().runs().get("deadlined", s.runId());
    assertThat(run.status()).isEqualTo(RunStatus.TIMED_OUT);
    assertThat(run.error().get("type").asText()).isEqualTo("DeadlineExceeded");
    assertThat(stepStopped.await(10, TimeUnit.SECONDS))
        .as("the step saw the cancellation")
        .isTrue();
    assertThat(server.client().runs().list("deadlined", RunStatus.TIMED_OUT, null, 10).runs())
        .extracting(RunInfo::runId)
        .containsExactly(s.runId());
  }

  @Test
  void aStartsDeadlineOverridesTheDefinitionsAndARunThatEndsInTimeKeepsItsResult() {
    Workflow<String, String> wf =
        Workflow.define("in-time", String.class, String.class)
            .deadline(Duration.ofMillis(1))
            .run((ctx, in) -> in + "!");
    server.serve(wf);
    Started s =
        server
            .client()
            .start(wf, "ok", StartOptions.builder().deadline(Duration.ofMinutes(5)).build());
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("in-time", s.runId(), String.class, Duration.ofSeconds(20)))
        .isEqualTo("ok!");
    assertThat(server.client().runs().get("in-time", s.runId()).status())
        .isEqualTo(RunStatus.COMPLETED);
  }

  @Test
  void concurrentDebouncedStartsMakeOneRunThatRunsOnce() throws Exception {
    AtomicInteger bodies = new AtomicInteger();
    Workflow<Integer, Integer> wf =
        Workflow.define("debounced", Integer.class, Integer.class)
            .run(
                (ctx, in) -> {
                  bodies.incrementAndGet();
                  return in;
                });
    int n = 20;
    ExecutorService pool = Executors.newFixedThreadPool(n);
    List<Started> answers = new ArrayList<>();
    try {
      CyclicBarrier go = new CyclicBarrier(n);
      List<Future<Started>> starts = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int input = i;
        starts.add(
            pool.submit(
                () -> {
                  go.await();
                  return server
                      .client()
                      .start(
                          wf,
                          input,
                          StartOptions.builder().debounce("k", Duration.ofMillis(1500)).build());
                }));
      }
      for (Future<Started> f : starts) {
        answers.add(f.get());
      }
    } finally {
      pool.shutdownNow();
    }
    Set<Long> runs = ConcurrentHashMap.newKeySet();
    answers.forEach(a -> runs.add(a.runId()));
    assertThat(runs).hasSize(1);
    assertThat(answers.stream().filter(Started::created)).hasSize(1);
    assertThat(answers.stream().filter(Started::debounced)).hasSize(n - 1);
    long run = runs.iterator().next();
    server.serve(wf);
    int output =
        server.client().runs().awaitResult("debounced", run, Integer.class, Duration.ofSeconds(20));
    assertThat(output).isBetween(0, n - 1);
    assertThat(bodies.get()).isEqualTo(1);
    // Once the run has begun, the key starts a new run.
    Started next =
        server
            .client()
            .start(wf, 99, StartOptions.builder().debounce("k", Duration.ofMillis(10)).build());
    assertThat(next.created()).isTrue();
    assertThat(next.runId()).isNotEqualTo(run);
  }

  @Test
  void badTimingIsRefusedBeforeAnyRequest() {
    assertThatThrownBy(
            () ->
                StartOptions.builder().startAt(Instant.now()).delay(Duration.ofSeconds(1)).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> StartOptions.builder().delay(Duration.ofDays(400)).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> StartOptions.builder().debounce("k", Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                StartOptions.builder()
                    .debounce("k", Duration.ofSeconds(1))
                    .idempotencyKey("i")
                    .build())
        .isInstanceOf(IllegalArgumentException.class);
  }
}
