package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A step attempt longer than its timeout is abandoned: interrupted, counted as a failed attempt
 * with a StepTimeoutException, its late result never journaled; one that ignores interrupts is
 * abandoned all the same.
 */
class StepTimeoutTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void aSleepingStepTimesOutOnEachAttemptAndFailsTheRunQuickly() {
    AtomicInteger interrupted = new AtomicInteger();
    Workflow<String, String> wf =
        Workflow.define("sleepy", String.class, String.class)
            .run(
                (ctx, in) ->
                    ctx.step()
                        .run(
                            "nap",
                            String.class,
                            () -> {
                              try {
                                Thread.sleep(10_000);
                              } catch (InterruptedException e) {
                                interrupted.incrementAndGet();
                                throw e;
                              }
                              return "rested";
                            },
                            Retry.fixed(2, Duration.ofMillis(10))
                                .withTimeout(Duration.ofMillis(200))));
    server.serve(wf);
    long t0 = System.nanoTime();
    Started s = server.client().start(wf, "x");
    assertThatThrownBy(
            () ->
                server
                    .client()
                    .runs()
                    .awaitResult("sleepy", s.runId(), String.class, Duration.ofSeconds(30)))
        .isInstanceOf(WorkflowFailedException.class);
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
    RunInfo run = server.client().runs().get("sleepy", s.runId());
    assertThat(run.error().get("type").asText()).isEqualTo(StepTimeoutException.class.getName());
    assertThat(interrupted.get()).isEqualTo(2);
    StepInfo step = server.client().runs().steps("sleepy", s.runId()).get(0);
    assertThat(step.attempts()).isEqualTo(2);
  }

  @Test
  void aStepThatIgnoresInterruptsIsAbandonedAndItsLateResultIsNotJournaled() throws Exception {
    AtomicInteger finished = new AtomicInteger();
    Workflow<String, String> wf =
        Workflow.define("stubborn", String.class, String.class)
            .run(
                (ctx, in) -> {
                  try {
                    return ctx.step()
                        .run(
                            "grind",
                            String.class,
                            () -> {
                              long end = System.nanoTime() + 1_000_000_000L;
                              while (System.nanoTime() < end) {
                                Thread.onSpinWait();
                              }
                              finished.incrementAndGet();
                              return "late";
                            },
                            Retry.none().withTimeout(Duration.ofMillis(100)));
                  } catch (StepFailedException e) {
                    return "caught " + e.errorType();
                  }
                });
    server.serve(wf);
    long t0 = System.nanoTime();
    Started s = server.client().start(wf, "x");
    String out =
        server
            .client()
            .runs()
            .awaitResult("stubborn", s.runId(), String.class, Duration.ofSeconds(30));
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(900));
    assertThat(out).isEqualTo("caught " + StepTimeoutException.class.getName());
    // The abandoned attempt finishes later; nothing it returned reaches the journal.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (finished.get() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(finished.get()).isEqualTo(1);
    Thread.sleep(200);
    List<StepInfo> steps = server.client().runs().steps("stubborn", s.runId());
    assertThat(steps).hasSize(1);
    assertThat(steps.get(0).error().get("type").asText())
        .isEqualTo(StepTimeoutException.class.getName());
    assertThat(steps.get(0).output() == null || steps.get(0).output().isNull())
        .as("no output journaled")
        .isTrue();
  }

  @Test
  void aParallelBranchHonoursItsTimeout() {
    Workflow<String, String> wf =
        Workflow.define("branchy", String.class, String.class)
            .run(
                (ctx, in) -> {
                  try {
                    ctx.step()
                        .parallel(
                            List.of(
                                Branch.of(
                                    "slow",
                                    String.class,
                                    () -> {
                                      Thread.sleep(10_000);
                                      return "slow";
                                    },
                                    Retry.none().withTimeout(Duration.ofMillis(150))),
                                Branch.of("quick", String.class, () -> "quick")));
                    return "no failure";
                  } catch (StepFailedException e) {
                    return e.step() + " " + e.errorType();
                  }
                });
    server.serve(wf);
    Started s = server.client().start(wf, "x");
    String out =
        server
            .client()
            .runs()
            .awaitResult("branchy", s.runId(), String.class, Duration.ofSeconds(30));
    assertThat(out).isEqualTo("slow " + StepTimeoutException.class.getName());
  }
}
