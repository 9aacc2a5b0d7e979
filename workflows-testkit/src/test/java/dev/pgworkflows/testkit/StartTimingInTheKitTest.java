package dev.pgworkflows.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowFailedException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The kit's time travel moves delayed starts and deadlines too: a start delayed by a day runs once
 * the kit advances a day, and a run whose deadline is an hour away is timed out by then although
 * its sleep still has weeks to go.
 */
class StartTimingInTheKitTest {

  @Test
  void advancingTimeRunsADelayedStartAndTimesOutARunPastItsDeadline() {
    Workflow<String, String> echo =
        Workflow.define("echo", String.class, String.class).run((ctx, in) -> in);
    Workflow<String, String> slow =
        Workflow.define("slow", String.class, String.class)
            .deadline(Duration.ofHours(1))
            .run(
                (ctx, in) -> {
                  ctx.step().sleep("nap", Duration.ofDays(30));
                  return in;
                });
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      Worker a = echo.serve(kit.workerOptions());
      Worker b = slow.serve(kit.workerOptions());
      try {
        Started later =
            kit.client()
                .start(echo, "hi", StartOptions.builder().delay(Duration.ofDays(1)).build());
        Started stuck = kit.client().start(slow, "x");
        assertThatThrownBy(
                () ->
                    kit.client()
                        .runs()
                        .awaitResult("echo", later.runId(), String.class, Duration.ofSeconds(1)))
            .hasMessageContaining("did not finish");
        kit.advanceTime(Duration.ofDays(1).plusHours(1));
        assertThat(
                kit.client()
                    .runs()
                    .awaitResult("echo", later.runId(), String.class, Duration.ofSeconds(20)))
            .isEqualTo("hi");
        assertThatThrownBy(
                () ->
                    kit.client()
                        .runs()
                        .awaitResult("slow", stuck.runId(), String.class, Duration.ofSeconds(20)))
            .isInstanceOf(WorkflowFailedException.class);
        assertThat(kit.client().runs().get("slow", stuck.runId()).status())
            .isEqualTo(RunStatus.TIMED_OUT);
      } finally {
        a.close();
        b.close();
      }
    }
  }
}
