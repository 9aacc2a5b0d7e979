package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.testing.LiveServer;
import dev.pgworkflows.workflows.testing.RecordingProxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Workers whose wall clocks run five minutes ahead of the server's and five minutes behind it. The
 * server and this test read the real clock, so {@link System#currentTimeMillis()} taken in a step
 * is the server's time. What the server times (sleeps, wait timeouts, retry backoff, leases,
 * deadlines) lasts as long as it should by that clock, and what the worker times itself (a step's
 * timeout) on its monotonic clock; only the readings the worker journals ({@code ctx.now()}, a
 * step's {@code startedAt}, a sleep's {@code until}) carry the skew. Each test runs both workers at
 * once, each on a workflow of its own.
 */
class SkewedWorkerClockTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  private static final Duration SKEW = Duration.ofMinutes(5);

  /** Each worker's name and how far its clock is off the server's. */
  private static final Map<String, Duration> SKEWS =
      Map.of("ahead", SKEW, "behind", SKEW.negated());

  /** How late past its due time a timed event may come (wake-ups, task streams, a slow box). */
  private static final long SLACK_MS = 2_000;

  private static Worker skewed(Workflow<?, ?> wf, Duration skew) {
    return skewed(wf, skew, Duration.ofSeconds(60));
  }

  private static Worker skewed(Workflow<?, ?> wf, Duration skew, Duration lease) {
    return server.serve(
        wf,
        WorkerOptions.url(server.url())
            .pollWait(Duration.ofSeconds(2))
            .lease(lease)
            .clock(InstantSource.offset(InstantSource.system(), skew)));
  }

  /**
   * One workflow per skew ("&lt;prefix&gt;-ahead", "&lt;prefix&gt;-behind"), each served skewed.
   */
  private static <I, O> Map<String, Workflow<I, O>> servedPerSkew(
      String prefix, Function<String, Workflow<I, O>> define) {
    Map<String, Workflow<I, O>> out = new LinkedHashMap<>();
    SKEWS.forEach(
        (who, skew) -> {
          Workflow<I, O> wf = define.apply(prefix + "-" + who);
          skewed(wf, skew);
          out.put(who, wf);
        });
    return out;
  }

  private static void assertNear(Instant actual, Instant expected, long toleranceMs) {
    assertThat(actual.toEpochMilli()).isCloseTo(expected.toEpochMilli(), within(toleranceMs));
  }

  record Gap(long before, long after) {
    long ms() {
      return after - before;
    }
  }

  @Test
  void aSleepLastsItsDurationByTheServersClockAndOnlyItsJournaledReadingsCarryTheSkew() {
    Map<String, Workflow<String, Gap>> wfs =
        servedPerSkew(
            "sk-sleep",
            name ->
                Workflow.define(name, String.class, Gap.class)
                    .run(
                        (ctx, in) -> {
                          long before =
                              ctx.step().run("before", Long.class, System::currentTimeMillis);
                          ctx.step().sleep("nap", Duration.ofSeconds(2));
                          long after =
                              ctx.step().run("after", Long.class, System::currentTimeMillis);
                          return new Gap(before, after);
                        }));
    Map<String, Long> runs = new LinkedHashMap<>();
    wfs.forEach((who, wf) -> runs.put(who, server.client().start(wf, "x").runId()));
    runs.forEach(
        (who, run) -> {
          String name = "sk-sleep-" + who;
          Gap gap =
              server.client().runs().awaitResult(name, run, Gap.class, Duration.ofSeconds(30));
          assertThat(gap.ms()).as(who).isBetween(2_000L, 2_000 + SLACK_MS);
          List<StepInfo> steps = server.client().runs().steps(name, run);
          assertThat(steps).extracting(StepInfo::name).containsExactly("before", "nap", "after");
          Duration skew = SKEWS.get(who);
          // A step's start is the worker's reading; its completion the server's.
          Instant realBefore = Instant.ofEpochMilli(gap.before());
          assertNear(steps.get(0).startedAt(), realBefore.plus(skew), 1_000);
          assertNear(steps.get(0).completedAt(), realBefore, 1_000);
          // The sleep's journaled until is where the worker's clock put its end; its row completes
          // where the server's did.
          StepInfo nap = steps.get(1);
          Instant until = Instant.parse(nap.output().get("until").asText());
          assertNear(until, realBefore.plus(skew).plusSeconds(2), 1_000);
          assertNear(nap.completedAt(), realBefore.plusSeconds(2), 1_000);
        });
  }

  @Test
  void aSleepWhoseCompletionGoesOutLateStillEndsItsDurationAfterTheCall() throws Exception {
    // The step before the sleep has its completion held back until the sleep is called, then sent
    // through a proxy that holds it 1.5 s, as a slow network would: the sleep's own completion
    // leaves at least that long after the call and must carry only what is left of the 2 s.
    try (RecordingProxy proxy =
        new RecordingProxy(
            server.url(),
            r -> r.path().endsWith("/tasks/complete") && r.body().contains("\"name\":\"before\""),
            1_500)) {
      Map<String, Long> runs = new LinkedHashMap<>();
      List<Worker> workers = new ArrayList<>();
      SKEWS.forEach(
          (who, skew) -> {
            Workflow<String, Long> wf =
                Workflow.define("sk-late-" + who, String.class, Long.class)
                    .run(
                        (ctx, in) -> {
                          long called =
                              ctx.step().run("before", Long.class, System::currentTimeMillis);
                          ctx.step().sleep("nap", Duration.ofSeconds(2));
                          return called;
                        });
            workers.add(
                server.serve(
                    wf,
                    WorkerOptions.url(proxy.url())
                        .pollWait(Duration.ofSeconds(2))
                        .clock(InstantSource.offset(InstantSource.system(), skew))));
            runs.put(who, server.client().start(wf, "x").runId());
          });
      runs.forEach(
          (who, run) -> {
            String name = "sk-late-" + who;
            long called =
                server.client().runs().awaitResult(name, run, Long.class, Duration.ofSeconds(30));
            List<StepInfo> steps = server.client().runs().steps(name, run);
            assertThat(steps).extracting(StepInfo::name).containsExactly("before", "nap");
            long beforeApplied = steps.get(0).completedAt().toEpochMilli();
            long napEnded = steps.get(1).completedAt().toEpochMilli();
            assertThat(beforeApplied - called)
                .as("%s: the proxy held the step's completion, sent when the sleep was called", who)
                .isGreaterThanOrEqualTo(1_400L);
            // By the server's times: the sleep ends 2 s after the call, so well under 2 s after
            // the held completion was applied (it would be 2 s or more if the time the completion
            // waited were not subtracted).
            assertThat(napEnded - beforeApplied).as(who).isBetween(0L, 1_200L);
            assertThat(napEnded - called).as(who).isBetween(1_950L, 2_000 + SLACK_MS / 2);
          });
      workers.forEach(Worker::close);
    }
  }

  record Waited(long before, long afterEvent, long afterAny, boolean eventCame, boolean anyFired) {}

  @Test
  void aWaitForASignalTimesOutAfterItsTimeoutByTheServersClock() {
    Map<String, Workflow<String, Waited>> wfs =
        servedPerSkew(
            "sk-wait",
            name ->
                Workflow.define(name, String.class, Waited.class)
                    .run(
                        (ctx, in) -> {
                          long before =
                              ctx.step().run("before", Long.class, System::currentTimeMillis);
                          Optional<String> go =
                              ctx.step()
                                  .waitForEvent(
                                      "go", String.class, Match.any(), Duration.ofSeconds(2));
                          long afterEvent =
                              ctx.step().run("after-go", Long.class, System::currentTimeMillis);
                          Fired any =
                              ctx.step()
                                  .waitForAny(
                                      "either",
                                      Duration.ofSeconds(1),
                                      Arm.event("left"),
                                      Arm.event("right"));
                          long afterAny =
                              ctx.step().run("after-any", Long.class, System::currentTimeMillis);
                          return new Waited(
                              before, afterEvent, afterAny, go.isPresent(), !any.timedOut());
                        }));
    Map<String, Long> runs = new LinkedHashMap<>();
    wfs.forEach((who, wf) -> runs.put(who, server.client().start(wf, "x").runId()));
    runs.forEach(
        (who, run) -> {
          Waited w =
              server
                  .client()
                  .runs()
                  .awaitResult("sk-wait-" + who, run, Waited.class, Duration.ofSeconds(30));
          assertThat(w.eventCame()).isFalse();
          assertThat(w.anyFired()).isFalse();
          assertThat(w.afterEvent() - w.before()).as(who).isBetween(2_000L, 2_000 + SLACK_MS);
          assertThat(w.afterAny() - w.afterEvent()).as(who).isBetween(1_000L, 1_000 + SLACK_MS);
        });
  }

  @Test
  void aLongStepKeepsItsLeaseAndAnotherWorkerDoesNotTakeIt() throws Exception {
    // Each workflow's first worker takes the run and runs an 8 s step on a 6 s lease, renewed
    // every 2 s (a stall of 4 s would lose it, whatever the clocks); the worker with the opposite
    // skew joins while it runs and waits for tasks of the same workflow. A lease renewed by a
    // clock five minutes off would end five minutes early or late: the server's record of it is
    // read while the step runs.
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    Map<String, CountDownLatch> running = new ConcurrentHashMap<>();
    Map<String, Workflow<String, String>> wfs = new LinkedHashMap<>();
    for (String who : SKEWS.keySet()) {
      String name = "sk-lease-" + who;
      ran.put(name, new AtomicInteger());
      running.put(name, new CountDownLatch(1));
      wfs.put(
          who,
          Workflow.define(name, String.class, String.class)
              .run(
                  (ctx, in) ->
                      ctx.step()
                          .run(
                              "long",
                              String.class,
                              () -> {
                                ran.get(name).incrementAndGet();
                                running.get(name).countDown();
                                Thread.sleep(8_000);
                                return "done";
                              })));
      skewed(wfs.get(who), SKEWS.get(who), Duration.ofSeconds(6));
    }
    Map<String, Long> runs = new LinkedHashMap<>();
    wfs.forEach((who, wf) -> runs.put(who, server.client().start(wf, "x").runId()));
    for (String who : SKEWS.keySet()) {
      assertThat(running.get("sk-lease-" + who).await(20, TimeUnit.SECONDS)).isTrue();
      skewed(wfs.get(who), SKEWS.get(who).negated(), Duration.ofSeconds(6));
    }
    // Past the first renewals (each 2 s): the lease ends within its 6 s of the server's now.
    Thread.sleep(3_000);
    for (Map.Entry<String, Long> e : runs.entrySet()) {
      long leftMs = leaseLeftMs("sk-lease-" + e.getKey(), e.getValue());
      assertThat(leftMs).as(e.getKey()).isBetween(1_000L, 6_500L);
    }
    runs.forEach(
        (who, run) -> {
          String name = "sk-lease-" + who;
          assertThat(
                  server
                      .client()
                      .runs()
                      .awaitResult(name, run, String.class, Duration.ofSeconds(30)))
              .isEqualTo("done");
          assertThat(ran.get(name).get()).as(who).isEqualTo(1);
          assertThat(server.client().runs().steps(name, run).get(0).attempts()).isEqualTo(1);
        });
  }

  /** How long the lease on the run's task has left, by the database's clock. */
  private static long leaseLeftMs(String workflow, long run) throws SQLException {
    try (Connection c = server.database().connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT (extract(epoch FROM vt - clock_timestamp()) * 1000)::bigint FROM queue.\"q___wf_"
                    + workflow
                    + "\" WHERE group_id = ?")) {
      ps.setString(1, Long.toString(run));
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("the run's task").isTrue();
        return rs.getLong(1);
      }
    }
  }

  @Test
  void anExpiredLeaseIsReclaimedWhenItRunsOutByTheServersClock() {
    // A worker that took each run with a 2 s lease and died: the skewed worker takes it over.
    Map<String, Workflow<String, Long>> wfs = new LinkedHashMap<>();
    Map<String, Long> runs = new LinkedHashMap<>();
    Map<String, Long> taken = new LinkedHashMap<>();
    for (String who : SKEWS.keySet()) {
      String name = "sk-reclaim-" + who;
      Workflow<String, Long> wf =
          Workflow.define(name, String.class, Long.class)
              .run((ctx, in) -> ctx.step().run("work", Long.class, System::currentTimeMillis));
      wfs.put(who, wf);
      runs.put(who, server.client().start(wf, "x").runId());
      taken.put(who, System.currentTimeMillis());
      JsonNode tasks =
          server
              .api()
              .post(
                  "/v1/workflows/" + name + "/tasks/poll",
                  Map.of("versions", List.of(1), "waitSeconds", 5, "leaseSeconds", 2))
              .json()
              .get("tasks");
      assertThat(tasks).hasSize(1);
    }
    wfs.forEach((who, wf) -> skewed(wf, SKEWS.get(who)));
    runs.forEach(
        (who, run) -> {
          String name = "sk-reclaim-" + who;
          long ranAt =
              server.client().runs().awaitResult(name, run, Long.class, Duration.ofSeconds(30));
          assertThat(ranAt - taken.get(who)).as(who).isBetween(2_000L, 2_000 + SLACK_MS);
          assertThat(server.client().runs().steps(name, run).get(0).attempts()).isEqualTo(2);
        });
  }

  @Test
  void aRetryWaitsItsBackoffByTheServersClock() {
    Map<String, List<Long>> attempts = new ConcurrentHashMap<>();
    Map<String, Workflow<String, String>> wfs =
        servedPerSkew(
            "sk-retry",
            name ->
                Workflow.define(name, String.class, String.class)
                    .run(
                        (ctx, in) ->
                            ctx.step()
                                .run(
                                    "flaky",
                                    String.class,
                                    () -> {
                                      List<Long> seen =
                                          attempts.computeIfAbsent(
                                              name, k -> new CopyOnWriteArrayList<>());
                                      seen.add(System.currentTimeMillis());
                                      if (seen.size() == 1) {
                                        throw new IllegalStateException("first attempt fails");
                                      }
                                      return "ok";
                                    },
                                    Retry.fixed(2, Duration.ofSeconds(2)).withJitter(0))));
    Map<String, Long> runs = new LinkedHashMap<>();
    wfs.forEach((who, wf) -> runs.put(who, server.client().start(wf, "x").runId()));
    runs.forEach(
        (who, run) -> {
          String name = "sk-retry-" + who;
          assertThat(
                  server
                      .client()
                      .runs()
                      .awaitResult(name, run, String.class, Duration.ofSeconds(30)))
              .isEqualTo("ok");
          List<Long> seen = attempts.get(name);
          assertThat(seen).hasSize(2);
          assertThat(seen.get(1) - seen.get(0)).as(who).isBetween(2_000L, 2_000 + SLACK_MS);
        });
  }

  record Nows(String first, String second) {}

  @Test
  void ctxNowIsTheWorkersClockJournaledOnceAndReplayedAsItWas() {
    Map<String, List<Instant>> firstSeen = new ConcurrentHashMap<>();
    Map<String, Workflow<String, Nows>> wfs =
        servedPerSkew(
            "sk-now",
            name ->
                Workflow.define(name, String.class, Nows.class)
                    .run(
                        (ctx, in) -> {
                          Instant first = ctx.now();
                          firstSeen
                              .computeIfAbsent(name, k -> new CopyOnWriteArrayList<>())
                              .add(first);
                          ctx.step().sleep("tick", Duration.ofMillis(300));
                          return new Nows(first.toString(), ctx.now().toString());
                        }));
    Instant t0 = Instant.now();
    Map<String, Long> runs = new LinkedHashMap<>();
    wfs.forEach((who, wf) -> runs.put(who, server.client().start(wf, "x").runId()));
    runs.forEach(
        (who, run) -> {
          String name = "sk-now-" + who;
          Nows nows =
              server.client().runs().awaitResult(name, run, Nows.class, Duration.ofSeconds(30));
          Instant t1 = Instant.now();
          Duration skew = SKEWS.get(who);
          Instant first = Instant.parse(nows.first());
          Instant second = Instant.parse(nows.second());
          assertThat(first).isBetween(t0.plus(skew), t1.plus(skew));
          assertThat(Duration.between(first, second))
              .isGreaterThanOrEqualTo(Duration.ofMillis(300));
          // The body ran twice (before the sleep and after it): the replay read the journal.
          assertThat(firstSeen.get(name)).hasSize(2).containsOnly(first);
          List<StepInfo> steps = server.client().runs().steps(name, run);
          assertThat(steps)
              .extracting(StepInfo::name)
              .containsExactly("__now.1", "tick", "__now.2");
          assertThat(Instant.parse(steps.get(0).output().asText())).isEqualTo(first);
        });
  }

  @Test
  void aDeadlineEndsTheRunByTheServersClockWithTheStepCancelled() throws Exception {
    Map<String, CountDownLatch> stopped = new ConcurrentHashMap<>();
    Map<String, Workflow<String, String>> wfs = new LinkedHashMap<>();
    for (String who : SKEWS.keySet()) {
      String name = "sk-deadline-" + who;
      stopped.put(name, new CountDownLatch(1));
      Workflow<String, String> wf =
          Workflow.define(name, String.class, String.class)
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
                                stopped.get(name).countDown();
                                return "stopped";
                              }));
      wfs.put(who, wf);
      skewed(wf, SKEWS.get(who), Duration.ofSeconds(1));
    }
    Map<String, Long> runs = new LinkedHashMap<>();
    wfs.forEach(
        (who, wf) ->
            runs.put(
                who,
                server
                    .client()
                    .start(wf, "x", StartOptions.builder().deadline(Duration.ofSeconds(2)).build())
                    .runId()));
    for (Map.Entry<String, Long> e : runs.entrySet()) {
      String name = "sk-deadline-" + e.getKey();
      assertThatThrownBy(
              () ->
                  server
                      .client()
                      .runs()
                      .awaitResult(name, e.getValue(), String.class, Duration.ofSeconds(30)))
          .isInstanceOf(WorkflowFailedException.class);
      RunInfo run = server.client().runs().get(name, e.getValue());
      assertThat(run.status()).isEqualTo(RunStatus.TIMED_OUT);
      assertThat(Duration.between(run.startedAt(), run.deadlineAt()).toMillis())
          .isCloseTo(2_000L, within(5L));
      assertThat(Duration.between(run.deadlineAt(), run.completedAt()).toMillis())
          .as(e.getKey())
          .isBetween(0L, SLACK_MS);
      assertThat(stopped.get(name).await(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void aStepTimeoutIsMeasuredOnTheWorkersMonotonicClock() {
    Map<String, Workflow<String, String>> wfs =
        servedPerSkew(
            "sk-timeout",
            name ->
                Workflow.define(name, String.class, String.class)
                    .run(
                        (ctx, in) ->
                            ctx.step()
                                .run(
                                    "slow",
                                    String.class,
                                    () -> {
                                      Thread.sleep(10_000);
                                      return "late";
                                    },
                                    Retry.none().withTimeout(Duration.ofMillis(500)))));
    Map<String, Long> runs = new LinkedHashMap<>();
    wfs.forEach((who, wf) -> runs.put(who, server.client().start(wf, "x").runId()));
    runs.forEach(
        (who, run) -> {
          String name = "sk-timeout-" + who;
          assertThatThrownBy(
                  () ->
                      server
                          .client()
                          .runs()
                          .awaitResult(name, run, String.class, Duration.ofSeconds(30)))
              .isInstanceOf(WorkflowFailedException.class);
          RunInfo info = server.client().runs().get(name, run);
          assertThat(info.error().get("type").asText())
              .isEqualTo(StepTimeoutException.class.getName());
          assertThat(Duration.between(info.startedAt(), info.completedAt()).toMillis())
              .as(who)
              .isBetween(500L, 500 + SLACK_MS);
        });
  }
}
