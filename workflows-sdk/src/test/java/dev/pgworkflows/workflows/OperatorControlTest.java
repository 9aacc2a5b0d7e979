package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An operator's controls seen from real workers of a real server: paused runs and workflows are not
 * handed out until resumed (timers coming due meanwhile), a restarted run replays the steps before
 * its restart point without running them, and a fork does the same with new input.
 */
class OperatorControlTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  private static final Duration QUIET = Duration.ofMillis(1500);

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 30 s: " + what);
      }
      Thread.sleep(20);
    }
  }

  private static List<String> stepNames(String workflow, long run) {
    List<String> names = new ArrayList<>();
    server.client().runs().steps(workflow, run).forEach(s -> names.add(s.name()));
    return names;
  }

  @Test
  void aRunPausedBetweenStepsDoesNotContinueUntilResumed() throws Exception {
    CountDownLatch inFirst = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger second = new AtomicInteger();
    Workflow<Integer, Integer> wf =
        Workflow.define("pause-between", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  ctx.step()
                      .run(
                          "first",
                          Integer.class,
                          () -> {
                            inFirst.countDown();
                            release.await();
                            return n;
                          });
                  return ctx.step().run("second", Integer.class, second::incrementAndGet);
                });
    server.serve(wf);
    long run = server.client().start(wf, 1).runId();
    assertThat(inFirst.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(server.client().runs().pause("pause-between", run).paused()).isTrue();
    release.countDown();
    await(() -> stepNames("pause-between", run).contains("first"), "the first step journaled");
    Thread.sleep(QUIET.toMillis());
    assertThat(second.get()).as("second step runs while paused").isZero();
    assertThat(server.client().runs().get("pause-between", run).status())
        .isEqualTo(RunStatus.RUNNING);

    assertThat(server.client().runs().resume("pause-between", run).paused()).isFalse();
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("pause-between", run, Integer.class, Duration.ofSeconds(30)))
        .isEqualTo(1);
    assertThat(second.get()).isEqualTo(1);
  }

  @Test
  void aPausedRunsSleepComesDueWhilePausedAndRunsOnlyAfterTheResume() throws Exception {
    AtomicInteger after = new AtomicInteger();
    Workflow<Integer, Integer> wf =
        Workflow.define("pause-sleep", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  ctx.step().sleep("nap", Duration.ofMillis(500));
                  return ctx.step().run("after", Integer.class, after::incrementAndGet);
                });
    server.serve(wf);
    long run = server.client().start(wf, 1).runId();
    await(() -> stepNames("pause-sleep", run).contains("nap"), "the sleep journaled");
    server.client().runs().pause("pause-sleep", run);
    Thread.sleep(500 + QUIET.toMillis());
    assertThat(after.get()).as("the step after the sleep, while paused").isZero();
    assertThat(server.client().runs().get("pause-sleep", run).paused()).isTrue();

    server.client().runs().resume("pause-sleep", run);
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("pause-sleep", run, Integer.class, Duration.ofSeconds(30)))
        .isEqualTo(1);
  }

  @Test
  void aPausedWorkflowAcceptsStartsAndHandsNothingOutUntilResumed() throws Exception {
    AtomicInteger ran = new AtomicInteger();
    Workflow<Integer, Integer> wf =
        Workflow.define("pause-all", Integer.class, Integer.class)
            .run((ctx, n) -> ctx.step().run("work", Integer.class, () -> ran.incrementAndGet()));
    server.serve(wf);
    await(() -> pausable("pause-all"), "the worker registered");
    List<Long> runs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      runs.add(server.client().start(wf, i).runId());
    }
    Thread.sleep(QUIET.toMillis());
    assertThat(ran.get()).as("steps run while the workflow is paused").isZero();

    server.client().workflows().resume("pause-all");
    for (long run : runs) {
      server.client().runs().awaitResult("pause-all", run, Integer.class, Duration.ofSeconds(30));
    }
    assertThat(ran.get()).isEqualTo(3);
  }

  /** Pauses the workflow once a worker has made it known; false until then. */
  private static boolean pausable(String workflow) {
    try {
      server.client().workflows().pause(workflow);
      return true;
    } catch (ApiException e) {
      if (e.status() == 404) {
        return false;
      }
      throw e;
    }
  }

  @Test
  void aFailedRunRestartedFromItsSecondStepKeepsTheFirstAndCompletes() {
    AtomicInteger first = new AtomicInteger();
    AtomicBoolean broken = new AtomicBoolean(true);
    Workflow<Integer, String> wf =
        Workflow.define("restartable", Integer.class, String.class)
            .run(
                (ctx, n) -> {
                  int a = ctx.step().run("first", Integer.class, first::incrementAndGet);
                  String b =
                      ctx.step()
                          .run(
                              "second",
                              String.class,
                              () -> {
                                if (broken.get()) {
                                  throw new IllegalStateException("down");
                                }
                                return "fixed";
                              },
                              Retry.none());
                  return ctx.step().run("third", String.class, () -> b + ":" + a);
                });
    server.serve(wf);
    long run = server.client().start(wf, 1).runId();
    assertThatThrownBy(
            () ->
                server
                    .client()
                    .runs()
                    .awaitResult("restartable", run, String.class, Duration.ofSeconds(30)))
        .isInstanceOf(WorkflowFailedException.class);

    broken.set(false);
    RunInfo restarted = server.client().runs().restart("restartable", run, "second");
    assertThat(restarted.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(restarted.error()).isNull();
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("restartable", run, String.class, Duration.ofSeconds(30)))
        .isEqualTo("fixed:1");
    assertThat(first.get()).as("runs of the first step").isEqualTo(1);
    assertThat(stepNames("restartable", run)).containsExactly("first", "second", "third");
    List<StepInfo> all = server.client().runs().steps("restartable", run, true);
    assertThat(all)
        .filteredOn(StepInfo::setAside)
        .extracting(StepInfo::name)
        .containsExactly("second");
    assertThat(all)
        .filteredOn(StepInfo::setAside)
        .first()
        .satisfies(s -> assertThat(s.error()).isNotNull());
  }

  @Test
  void aForkWithNewInputReplaysTheCopiedStepsWithoutRunningThem() {
    AtomicInteger first = new AtomicInteger();
    Workflow<Integer, Integer> wf =
        Workflow.define("forkable", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  int a =
                      ctx.step().run("first", Integer.class, () -> first.incrementAndGet() * 100);
                  return ctx.step().run("second", Integer.class, () -> a + n);
                });
    server.serve(wf);
    long origin = server.client().start(wf, 1).runId();
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("forkable", origin, Integer.class, Duration.ofSeconds(30)))
        .isEqualTo(101);

    RunInfo fork = server.client().runs().fork("forkable", origin, "second", 7);
    assertThat(fork.runId()).isNotEqualTo(origin);
    assertThat(fork.forkedFrom()).isEqualTo(new RunInfo.ForkedFrom(origin, "second"));
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("forkable", fork.runId(), Integer.class, Duration.ofSeconds(30)))
        .isEqualTo(107);
    assertThat(first.get()).as("runs of the copied step").isEqualTo(1);
    assertThat(server.client().runs().get("forkable", origin).forkedFrom()).isNull();
  }
}
