package dev.pgworkflows.workflows.internal.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.NonDeterministicWorkflowException;
import dev.pgworkflows.workflows.StepFailedException;
import dev.pgworkflows.workflows.WorkflowBody;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The worker's replay run with no server: it replays what the journal holds, stops before anything
 * new, and its lease refuses every write.
 */
class ReplayOnlyTest {
  private final AtomicInteger ran = new AtomicInteger();

  private static Task.Entry run(String name, Object output) {
    return new Task.Entry(name, "run", Transport.JSON.valueToTree(output), null, false);
  }

  private static Task task(Object input, Task.Entry... journal) {
    return new Task(
        7,
        0,
        null,
        1,
        1,
        "resume",
        Transport.JSON.valueToTree(input),
        List.of(journal),
        null,
        null);
  }

  private String counted(String value) {
    ran.incrementAndGet();
    return value;
  }

  /** Charges, sleeps, then waits for a confirmation. */
  private WorkflowBody<String, String> order(List<String> seen) {
    return (ctx, in) -> {
      seen.add(ctx.step().run("charge", String.class, () -> counted("live-" + in)));
      ctx.step().sleep("cool-off", Duration.ofDays(1));
      seen.add(
          ctx.step()
              .waitForEvent("confirm", String.class, Match.any(), Duration.ofDays(1))
              .orElse("none"));
      return ctx.step().run("ship", String.class, () -> counted("shipped"));
    };
  }

  private static ReplayOnly.Outcome replay(
      WorkflowBody<String, String> body, Task task, String waitingIn) {
    return ReplayOnly.replay("order", String.class, body, task, waitingIn);
  }

  @Test
  void aFullyJournaledRunReturnsWithTheJournaledOutputsAndRunsNoStep() {
    List<String> seen = new ArrayList<>();
    Task task =
        task(
            "o-1",
            run("charge", "charged"),
            new Task.Entry("cool-off", "sleep", null, null, false),
            new Task.Entry("confirm", "wait", TextNode.valueOf("yes"), null, false),
            run("ship", "parcel"));

    ReplayOnly.Outcome outcome = replay(order(seen), task, null);

    assertThat(outcome.ending()).isEqualTo(ReplayOnly.Ending.RETURNED);
    assertThat(seen).containsExactly("charged", "yes");
    assertThat(ran).hasValue(0);
  }

  @Test
  void theFirstNewStepStopsTheReplayBeforeItsCodeRuns() {
    List<String> seen = new ArrayList<>();
    ReplayOnly.Outcome outcome = replay(order(seen), task("o-1", run("charge", "charged")), null);

    // The sleep is new: the replay ends at the journal's end.
    assertThat(outcome.ending()).isEqualTo(ReplayOnly.Ending.JOURNAL_END);
    assertThat(seen).containsExactly("charged");
    assertThat(ran).hasValue(0);

    assertThat(replay(order(seen), task("o-1"), null).ending())
        .isEqualTo(ReplayOnly.Ending.JOURNAL_END);
    assertThat(ran).hasValue(0);
  }

  @Test
  void aRunWaitingInAStepMustReachThatStepNext() {
    Task task =
        task("o-1", run("charge", "c"), new Task.Entry("cool-off", "sleep", null, null, false));
    assertThat(replay(order(new ArrayList<>()), task, "confirm").ending())
        .isEqualTo(ReplayOnly.Ending.JOURNAL_END);

    ReplayOnly.Outcome elsewhere = replay(order(new ArrayList<>()), task, "approve");
    assertThat(elsewhere.ending()).isEqualTo(ReplayOnly.Ending.NON_DETERMINISTIC);
    assertThat(elsewhere.position()).isEqualTo(3);
    assertThat(elsewhere.error())
        .hasMessage(
            "replay of run 7 reached step \"confirm\" where the journal has step \"approve\""
                + " (step 3)");
  }

  @Test
  void aMismatchTheBodyCatchesIsReportedAllTheSame() {
    WorkflowBody<String, String> swallowing =
        (ctx, in) -> {
          try {
            ctx.step().run("refund", String.class, () -> counted("r"));
          } catch (RuntimeException e) {
            // compensation code that catches too much
          }
          return "done";
        };

    ReplayOnly.Outcome outcome = replay(swallowing, task("o-1", run("charge", "c")), null);

    assertThat(outcome.ending()).isEqualTo(ReplayOnly.Ending.NON_DETERMINISTIC);
    assertThat(outcome.error()).isInstanceOf(NonDeterministicWorkflowException.class);
    assertThat(outcome.position()).isEqualTo(1);
    assertThat(ran).hasValue(0);
  }

  @Test
  void aJournaledFailureFailsTheReplayAsItFailedTheRun() {
    JsonNode error = Transport.JSON.createObjectNode().put("type", "Declined").put("message", "no");
    Task task = task("o-1", new Task.Entry("charge", "run", null, error, false));

    ReplayOnly.Outcome outcome = replay(order(new ArrayList<>()), task, null);

    assertThat(outcome.ending()).isEqualTo(ReplayOnly.Ending.FAILED);
    assertThat(outcome.error()).isInstanceOf(StepFailedException.class);
  }

  @Test
  void anInputThatNoLongerReadsIsReported() {
    ReplayOnly.Outcome outcome =
        ReplayOnly.replay(
            "order", Integer.class, (ctx, in) -> in, task(List.of("not", "a", "number")), null);

    assertThat(outcome.ending()).isEqualTo(ReplayOnly.Ending.INPUT_UNREADABLE);
  }

  @Test
  void theOfflineLeaseRefusesEveryWriteBeforeSendingIt() {
    Lease lease = Lease.offline("order", task("o-1"));
    List<Executable> writes =
        List.of(
            () -> lease.completeInline(null, null),
            () -> lease.suspend(null, null),
            () -> lease.finish(null, null, null),
            () -> lease.retryLater(Duration.ZERO, null),
            () -> lease.rateLimited(Duration.ZERO),
            () -> lease.startChild(null),
            () -> lease.journal(List.of()),
            lease::extend);
    for (Executable write : writes) {
      assertThatThrownBy(write::execute)
          .isInstanceOfSatisfying(
              Suspend.class, s -> assertThat(s.why()).isEqualTo(Suspend.Why.JOURNAL_END));
    }
  }
}
