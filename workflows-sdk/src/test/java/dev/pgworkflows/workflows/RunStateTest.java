package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.testing.LiveServer;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-run state set from the body and from steps: readable in the run and from outside while it is
 * in flight, journaled only with a step that committed (never from a failed attempt or a worker
 * killed mid-step), read back the same on replay, reverted by a restart, and held to its limits in
 * the SDK.
 */
class RunStateTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void bodyAndStepChangesAreReadInTheRunAndFromOutsideWhileItWaits() {
    List<String> seenInStep = new CopyOnWriteArrayList<>();
    Workflow<String, String> wf =
        Workflow.define("st-progress", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.state().put("progress", 0);
                  ctx.step()
                      .run(
                          "work",
                          () -> {
                            seenInStep.add("before:" + ctx.state().get("progress", Integer.class));
                            ctx.state().put("progress", 50);
                            seenInStep.add("after:" + ctx.state().get("progress", Integer.class));
                          });
                  ctx.state().put("status", "awaiting approval");
                  ctx.state().put("items", List.of("a", "b"));
                  ctx.step()
                      .waitForEvent("approve", String.class, Match.any(), Duration.ofMinutes(1));
                  ctx.state().remove("status");
                  ctx.state().put("progress", 100);
                  List<String> items = ctx.state().get("items", new TypeRef<List<String>>() {});
                  return ctx.state().get("progress", Integer.class) + " " + items;
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started run = client.start("st-progress", "go");

    Optional<String> status =
        client
            .runs()
            .awaitState(
                run.workflow(), run.runId(), "status", String.class, Duration.ofSeconds(30));
    assertThat(status).contains("awaiting approval");
    Map<String, JsonNode> inFlight = client.runs().state(run.workflow(), run.runId());
    assertThat(inFlight.get("progress").asInt()).isEqualTo(50);
    assertThat(inFlight.get("items").toString()).isEqualTo("[\"a\",\"b\"]");
    assertThat(seenInStep).containsExactly("before:0", "after:50");

    client.signal("st-progress", run.runId(), "approve", "ok");
    assertThat(
            client
                .runs()
                .awaitResult("st-progress", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("100 [a, b]");
    Map<String, JsonNode> done = client.runs().state(run.workflow(), run.runId());
    assertThat(done).containsOnlyKeys("progress", "items");
    assertThat(done.get("progress").asInt()).isEqualTo(100);
    // The body's changes before the wait and before the end travelled in rows of their own.
    assertThat(client.runs().steps("st-progress", run.runId()))
        .extracting(StepInfo::name)
        .containsExactly("work", "__state.1", "approve", "__state.2");
  }

  @Test
  void aFailedAttemptLeavesNoStateAndTheNextAttemptDoesNotSeeIt() {
    List<String> seen = new CopyOnWriteArrayList<>();
    AtomicBoolean failFirst = new AtomicBoolean(true);
    Workflow<String, String> wf =
        Workflow.define("st-retry", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step()
                      .run(
                          "flaky",
                          () -> {
                            seen.add(
                                ctx.attempt()
                                    + ":"
                                    + ctx.state().get("fromAttempt", Integer.class));
                            ctx.state().put("fromAttempt", ctx.attempt());
                            if (failFirst.getAndSet(false)) {
                              ctx.state().put("failedOnly", true);
                              throw new IllegalStateException("first attempt fails");
                            }
                          },
                          Retry.fixed(3, Duration.ofSeconds(2)));
                  try {
                    ctx.step()
                        .run(
                            "doomed",
                            () -> {
                              ctx.state().put("doomed", true);
                              throw new IllegalStateException("always");
                            },
                            Retry.none());
                  } catch (StepFailedException e) {
                    // the run goes on without it
                  }
                  return "ok";
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started run = client.start("st-retry", "go");
    // Between the attempts nothing of the first is visible.
    Awaitility.await().atMost(30, TimeUnit.SECONDS).until(() -> !seen.isEmpty());
    assertThat(client.runs().state(run.workflow(), run.runId())).isEmpty();
    assertThat(
            client
                .runs()
                .awaitResult("st-retry", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("ok");
    assertThat(seen).containsExactly("1:null", "2:null");
    Map<String, JsonNode> state = client.runs().state(run.workflow(), run.runId());
    assertThat(state).containsOnlyKeys("fromAttempt");
    assertThat(state.get("fromAttempt").asInt()).isEqualTo(2);
  }

  @Test
  void aWorkerKilledMidStepLeavesNoStateFromItAndTheReplayReadsTheSameValues(@TempDir Path dir)
      throws Exception {
    Path log = dir.resolve("seen.log");
    WorkflowClient client = server.client();
    Process child =
        WorkerJvm.start(
            StateWorkflow.class, dir.resolve("child.out"), server.url(), log.toString());
    try {
      Started s = client.start("stateful", "go");
      Awaitility.await()
          .atMost(60, TimeUnit.SECONDS)
          .until(() -> Files.exists(log) && !Files.readAllLines(log).isEmpty());
      // In flight, hanging in its second step: the first step's row and what the body set before
      // it are visible; what the hanging step set is not.
      Map<String, JsonNode> inFlight = client.runs().state(s.workflow(), s.runId());
      assertThat(inFlight).containsOnlyKeys("phase", "progress");
      assertThat(inFlight.get("progress").asInt()).isEqualTo(1);

      child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL mid-step
      String before = Files.readAllLines(log).get(0);
      assertThat(client.runs().state(s.workflow(), s.runId()))
          .containsOnlyKeys("phase", "progress");

      server.serve(StateWorkflow.define(log, false));
      String result =
          client.runs().awaitResult("stateful", s.runId(), String.class, Duration.ofSeconds(60));

      assertThat(before).isEqualTo("started:1:null");
      assertThat(Files.readAllLines(log)).containsExactly(before, before);
      assertThat(result).isEqualTo(before + "|2");
      Map<String, JsonNode> done = client.runs().state(s.workflow(), s.runId());
      assertThat(done.get("ranBy").asText()).isEqualTo("survivor");
      assertThat(done.get("seen").asText()).isEqualTo(before);
      assertThat(client.runs().steps("stateful", s.runId()))
          .extracting(StepInfo::name)
          .containsExactly("first", "second");
    } finally {
      child.destroyForcibly();
    }
  }

  @Test
  void aRestartFromAStepRevertsItsStateAndTheReplayJournalsTheBodysChangesAgain() {
    AtomicBoolean fail = new AtomicBoolean(true);
    Workflow<String, String> wf =
        Workflow.define("st-restart", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().run("a", () -> ctx.state().put("k", 1));
                  ctx.state().put("before", "b");
                  ctx.step()
                      .run(
                          "b",
                          () -> {
                            ctx.state().put("k", 2);
                            if (fail.get()) {
                              throw new IllegalStateException("b fails");
                            }
                          },
                          Retry.none());
                  return ctx.state().get("k", Integer.class)
                      + ctx.state().get("before", String.class);
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started run = client.start("st-restart", "go");
    assertThatThrownBy(
            () ->
                client
                    .runs()
                    .awaitResult("st-restart", run.runId(), String.class, Duration.ofSeconds(30)))
        .isInstanceOf(WorkflowFailedException.class);
    // The failed step's own change is dropped; the body's change before it went with its row.
    Map<String, JsonNode> failed = client.runs().state(run.workflow(), run.runId());
    assertThat(failed).containsOnlyKeys("k", "before");
    assertThat(failed.get("k").asInt()).isEqualTo(1);

    fail.set(false);
    client.runs().restart("st-restart", run.runId(), "b");
    assertThat(
            client
                .runs()
                .awaitResult("st-restart", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("2b");
    Map<String, JsonNode> after = client.runs().state(run.workflow(), run.runId());
    assertThat(after.get("k").asInt()).isEqualTo(2);
    assertThat(after.get("before").asText()).isEqualTo("b");
  }

  @Test
  void changesThatBreakALimitAreRefusedInTheSdkNamingTheKeyAndTheLimit() {
    Workflow<String, String> wf =
        Workflow.define("st-limits", String.class, String.class)
            .run(
                (ctx, in) -> {
                  List<String> errors = new ArrayList<>();
                  Runnable[] tries = {
                    () -> ctx.state().put("bad key", 1),
                    () -> ctx.state().put("__engine", 1),
                    () -> ctx.state().put("big", "x".repeat(70_000)),
                    () -> {
                      for (int i = 0; i < 101; i++) {
                        ctx.state().put("k" + i, i);
                      }
                    },
                    () ->
                        ctx.step()
                            .parallel(
                                List.of(
                                    Branch.of(
                                        "branch",
                                        Integer.class,
                                        () -> {
                                          ctx.state().put("fromBranch", 1);
                                          return 1;
                                        },
                                        Retry.none()))),
                  };
                  for (Runnable t : tries) {
                    try {
                      t.run();
                      errors.add("accepted");
                    } catch (IllegalArgumentException e) {
                      errors.add(e.getMessage());
                    } catch (StepFailedException e) {
                      errors.add(e.getMessage());
                    }
                  }
                  return String.join("\n", errors);
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started run = client.start("st-limits", "go");
    List<String> errors =
        List.of(
            client
                .runs()
                .awaitResult("st-limits", run.runId(), String.class, Duration.ofSeconds(30))
                .split("\n"));
    assertThat(errors.get(0)).contains("\"bad key\"").contains("1 to 128 characters");
    assertThat(errors.get(1)).contains("\"__engine\"").contains("not starting \"__\"");
    assertThat(errors.get(2)).contains("\"big\"").contains("at most 65536");
    assertThat(errors.get(3)).contains("\"k100\"").contains("at most 100");
    assertThat(errors.get(4)).contains("fromBranch").contains("parallel branch");
    // What the body set within the limits is there: the first 100 keys.
    assertThat(client.runs().state(run.workflow(), run.runId())).hasSize(100);
    assertThatThrownBy(
            () ->
                client
                    .runs()
                    .awaitState(
                        run.workflow(),
                        run.runId(),
                        "no good",
                        String.class,
                        Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\"no good\"");
  }

  /** The example of docs/state-and-streams.md, as printed but for the server's address. */
  @Test
  void thePageExampleReportsProgress() {
    Workflow<Integer, String> report =
        Workflow.define("build-report", Integer.class, String.class)
            .run(
                (ctx, parts) -> {
                  ctx.state().put("phase", "rendering");
                  for (int i = 1; i <= parts; i++) {
                    int part = i;
                    ctx.step()
                        .run(
                            "render-" + part,
                            () -> ctx.state().put("progress", part * 100 / parts));
                  }
                  ctx.state().put("phase", "done");
                  return "report of " + parts + " parts";
                });

    Worker worker = report.serve(WorkerOptions.url(server.url()));
    WorkflowClient client = WorkflowClient.connect(server.url());
    Started run = client.start(report, 4);
    Optional<Integer> progress =
        client
            .runs()
            .awaitState(
                run.workflow(), run.runId(), "progress", Integer.class, Duration.ofSeconds(10));
    client.runs().awaitResult("build-report", run.runId(), String.class, Duration.ofSeconds(10));
    Map<String, JsonNode> state = client.runs().state(run.workflow(), run.runId());
    worker.close();

    assertThat(progress).isPresent();
    assertThat(progress.get()).isBetween(25, 100);
    assertThat(state.get("phase").asText()).isEqualTo("done");
    assertThat(state.get("progress").asInt()).isEqualTo(100);
  }

  @Test
  void aWaitForAKeyThatIsNeverSetRunsOutCleanly() {
    Workflow<String, String> wf =
        Workflow.define("st-never", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().waitForEvent("go", String.class, Match.any(), Duration.ofMinutes(1));
                  return "done";
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started run = client.start("st-never", "go");
    long t0 = System.nanoTime();
    assertThat(
            client
                .runs()
                .awaitState(
                    run.workflow(), run.runId(), "never", String.class, Duration.ofMillis(1500)))
        .isEmpty();
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertThat(ms).isBetween(900L, 10_000L);
    assertThat(
            client
                .runs()
                .awaitState(run.workflow(), run.runId(), "never", String.class, Duration.ZERO))
        .isEmpty();
    client.signal("st-never", run.runId(), "go", "now");
    client.runs().awaitResult("st-never", run.runId(), String.class, Duration.ofSeconds(30));
    // A run that ended answers at once.
    long t1 = System.nanoTime();
    assertThat(
            client
                .runs()
                .awaitState(
                    run.workflow(), run.runId(), "never", String.class, Duration.ofSeconds(20)))
        .isEmpty();
    assertThat(System.nanoTime() - t1).isLessThan(TimeUnit.SECONDS.toNanos(5));
  }

  @Test
  void aTimedOutStepsAbandonedThreadCannotChangeState() {
    AtomicReference<Throwable> late = new AtomicReference<>();
    CountDownLatch tried = new CountDownLatch(1);
    Workflow<String, String> wf =
        Workflow.define("st-abandoned", String.class, String.class)
            .run(
                (ctx, in) -> {
                  try {
                    ctx.step()
                        .run(
                            "slow",
                            () -> {
                              // Ignores the interrupt and changes state after its timeout.
                              long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(400);
                              while (System.nanoTime() < until) {
                                Thread.onSpinWait();
                              }
                              try {
                                ctx.state().put("late", true);
                              } catch (RuntimeException e) {
                                late.set(e);
                              } finally {
                                tried.countDown();
                              }
                            },
                            Retry.none().withTimeout(Duration.ofMillis(100)));
                  } catch (StepFailedException e) {
                    // the run goes on without it
                  }
                  // The next step runs while the abandoned thread tries its change.
                  ctx.step()
                      .run(
                          "next",
                          () -> {
                            tried.await(10, TimeUnit.SECONDS);
                            ctx.state().put("next", 1);
                          });
                  return "ok";
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started run = client.start("st-abandoned", "go");
    assertThat(
            client
                .runs()
                .awaitResult("st-abandoned", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("ok");
    assertThat(late.get())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("step slow changed state key \"late\" after its attempt was over");
    Map<String, JsonNode> state = client.runs().state(run.workflow(), run.runId());
    assertThat(state).containsOnlyKeys("next");
  }

  @Test
  void aChangeFromAThreadAStepStartedIsRefused() {
    AtomicReference<Throwable> refused = new AtomicReference<>();
    Workflow<String, String> wf =
        Workflow.define("st-other-thread", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step()
                      .run(
                          "spawns",
                          () -> {
                            Thread t =
                                new Thread(
                                    () -> {
                                      try {
                                        ctx.state().put("fromThread", true);
                                      } catch (RuntimeException e) {
                                        refused.set(e);
                                      }
                                    });
                            t.start();
                            t.join();
                          });
                  return "ok";
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started run = client.start("st-other-thread", "go");
    assertThat(
            client
                .runs()
                .awaitResult("st-other-thread", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("ok");
    assertThat(refused.get())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("neither the workflow body's nor a step's");
    assertThat(client.runs().state(run.workflow(), run.runId())).isEmpty();
  }

  @Test
  void rateLimitedBranchesRetriedDoNotRepeatTheBodysCarrier() {
    AtomicInteger calls = new AtomicInteger();
    Workflow<String, String> wf =
        Workflow.define("st-limited", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.state().put("phase", "fanning out");
                  List<String> got =
                      ctx.step()
                          .parallel(
                              List.of(
                                  Branch.of(
                                      "b1",
                                      String.class,
                                      () -> {
                                        if (calls.incrementAndGet() <= 3) {
                                          throw new RateLimited(Duration.ofMillis(50));
                                        }
                                        return "b1";
                                      },
                                      Retry.none())));
                  return String.join(",", got);
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started run = client.start("st-limited", "go");
    assertThat(
            client
                .runs()
                .awaitResult("st-limited", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("b1");
    assertThat(calls.get()).isEqualTo(4);
    // The body's change went in one row, however often the group was tried.
    assertThat(client.runs().steps("st-limited", run.runId()))
        .extracting(StepInfo::name)
        .containsExactly("__state.1", "b1");
    assertThat(client.runs().state(run.workflow(), run.runId()).get("phase").asText())
        .isEqualTo("fanning out");
  }
}
