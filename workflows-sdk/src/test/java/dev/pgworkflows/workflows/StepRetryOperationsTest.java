package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An operator's controls over one run's retrying step, through a real server and worker: paused
 * retries make no attempt until resumed; options set for the run (more attempts, a timeout) are
 * what the worker applies from the next attempt, in place of the code's policy.
 */
@Timeout(90)
class StepRetryOperationsTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  private static final AtomicInteger CHARGES = new AtomicInteger();
  private static final AtomicInteger SLOW = new AtomicInteger();

  /** Fails its first four attempts; the code allows two, 2 s apart. */
  private static final Workflow<Integer, String> PAY =
      Workflow.define("step-ops-pay", Integer.class, String.class)
          .run(
              (ctx, in) ->
                  ctx.step()
                      .run(
                          "charge",
                          String.class,
                          () -> {
                            if (CHARGES.incrementAndGet() <= 4) {
                              throw new IllegalStateException("card declined");
                            }
                            return "charged";
                          },
                          Retry.fixed(2, Duration.ofSeconds(2))));

  /** Fails at once on its first attempt, then takes 3 s; the code has no timeout. */
  private static final Workflow<Integer, String> REPORT =
      Workflow.define("step-ops-report", Integer.class, String.class)
          .run(
              (ctx, in) ->
                  ctx.step()
                      .run(
                          "render",
                          String.class,
                          () -> {
                            if (SLOW.incrementAndGet() == 1) {
                              throw new IllegalStateException("not yet");
                            }
                            Thread.sleep(3_000);
                            return "rendered";
                          },
                          Retry.fixed(5, Duration.ofSeconds(2))));

  private static void await(BooleanSupplier condition) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition not met in 30 s").isLessThan(end);
      Thread.sleep(20);
    }
  }

  @Test
  void pausedRetriesWaitForTheResumeAndMoreAttemptsLetTheStepSucceed() throws Exception {
    WorkflowClient client = server.client();
    server.serve(PAY);
    Runs runs = client.runs();
    long run = client.start(PAY, 1).runId();
    await(() -> CHARGES.get() == 1);
    await(() -> runs.blockers(PAY.name(), run).stream().anyMatch(b -> b.kind().equals("retrying")));

    RetryingStep paused = runs.pauseStep(PAY.name(), run, "charge");
    assertThat(paused.state()).isEqualTo("paused");
    assertThat(paused.error().get("message").asText()).isEqualTo("card declined");
    Thread.sleep(2_500);
    assertThat(CHARGES.get()).as("no attempt while paused").isEqualTo(1);
    assertThat(runs.blockers(PAY.name(), run).get(0).text())
        .contains("the retries of step \"charge\" are paused");

    RetryingStep more =
        runs.setStepRetry(PAY.name(), run, "charge", Retry.fixed(10, Duration.ofMillis(100)));
    assertThat(more.options().get("attempts").asInt()).isEqualTo(10);
    runs.resumeStep(PAY.name(), run, "charge");
    assertThat(runs.awaitResult(PAY.name(), run, String.class, Duration.ofSeconds(30)))
        .isEqualTo("charged");
    assertThat(CHARGES.get()).isEqualTo(5);
    assertThat(runs.steps(PAY.name(), run).get(0).attempts()).isEqualTo(5);
    assertThatThrownBy(() -> runs.retryingStep(PAY.name(), run, "charge"))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("run " + run + " is completed: it retries no step");
  }

  @Test
  void aTimeoutSetForTheRunCutsAttemptsTheCodeLetRun() throws Exception {
    WorkflowClient client = server.client();
    server.serve(REPORT);
    Runs runs = client.runs();
    long run = client.start(REPORT, 1).runId();
    await(() -> SLOW.get() == 1);
    await(
        () ->
            runs.blockers(REPORT.name(), run).stream().anyMatch(b -> b.kind().equals("retrying")));
    runs.setStepRetry(
        REPORT.name(),
        run,
        "render",
        Retry.fixed(3, Duration.ofMillis(100)).withTimeout(Duration.ofMillis(300)));
    runs.resetStep(REPORT.name(), run, "render");
    assertThatThrownBy(
            () -> runs.awaitResult(REPORT.name(), run, String.class, Duration.ofSeconds(30)))
        .isInstanceOf(WorkflowFailedException.class)
        .hasMessageContaining("render");
    // Reset, the step had its three attempts of the options, each cut at 300 ms.
    assertThat(SLOW.get()).isEqualTo(4);
    assertThat(runs.steps(REPORT.name(), run).get(0).error().toString())
        .contains("StepTimeoutException");
  }
}
