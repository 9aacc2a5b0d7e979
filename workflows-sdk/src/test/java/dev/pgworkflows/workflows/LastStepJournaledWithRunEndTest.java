package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A run's last step is journaled in the transaction that ends the run (one write, not two), whether
 * the body returns, lets the step's failure escape, or throws after it; earlier steps are journaled
 * before the next one begins. Told apart by the rows' xmin: the transaction that wrote them.
 */
class LastStepJournaledWithRunEndTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  /** Whether step {@code step} of run {@code runId} was written by the run's ending transaction. */
  private static boolean journaledWithTheEnd(long runId, String step) throws Exception {
    try (Connection c = server.database().connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT s.xmin::text = r.xmin::text FROM queue.workflow_step s"
                    + " JOIN queue.workflow_run r USING (run_id)"
                    + " WHERE s.run_id = ? AND s.step_name = ?")) {
      ps.setLong(1, runId);
      ps.setString(2, step);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("step %s is journaled", step).isTrue();
        return rs.getBoolean(1);
      }
    }
  }

  private static <I, O> RunInfo run(Workflow<I, O> wf, I input) {
    Worker w = wf.serve(WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)));
    try {
      long id = server.client().start(wf.name(), input).runId();
      try {
        server.client().runs().awaitResult(wf.name(), id, Object.class, Duration.ofSeconds(20));
      } catch (WorkflowFailedException expected) {
        // the failing bodies below
      }
      return server.client().runs().get(wf.name(), id);
    } finally {
      w.close();
    }
  }

  @Test
  void theLastStepAndTheResultAreOneTransaction() throws Exception {
    Workflow<Integer, Integer> wf =
        Workflow.define("last-ok", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  int a = ctx.step().run("one", Integer.class, () -> n + 1);
                  int b = ctx.step().run("two", Integer.class, () -> a * 2);
                  return b + 1;
                });
    RunInfo run = run(wf, 4);
    assertThat(run.status()).isEqualTo(RunStatus.COMPLETED);
    assertThat(server.client().runs().steps("last-ok", run.runId()))
        .extracting(StepInfo::name)
        .containsExactly("one", "two");
    assertThat(journaledWithTheEnd(run.runId(), "two")).isTrue();
    assertThat(journaledWithTheEnd(run.runId(), "one")).isFalse();
  }

  @Test
  void aLastStepThatFailsIsJournaledWithTheFailedRun() throws Exception {
    Workflow<Integer, Integer> wf =
        Workflow.define("last-fails", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  ctx.step().run("one", Integer.class, () -> n);
                  return ctx.step()
                      .run(
                          "boom",
                          Integer.class,
                          () -> {
                            throw new IllegalStateException("no");
                          },
                          Retry.none());
                });
    RunInfo run = run(wf, 1);
    assertThat(run.status()).isEqualTo(RunStatus.FAILED);
    StepInfo boom = server.client().runs().steps("last-fails", run.runId()).get(1);
    assertThat(boom.name()).isEqualTo("boom");
    assertThat(boom.error()).isNotNull();
    assertThat(journaledWithTheEnd(run.runId(), "boom")).isTrue();
  }

  @Test
  void aBodyThatThrowsAfterAStepKeepsTheStep() throws Exception {
    Workflow<Integer, Integer> wf =
        Workflow.define("throws-after", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  int a = ctx.step().run("one", Integer.class, () -> n + 1);
                  throw new IllegalArgumentException("bad " + a);
                });
    RunInfo run = run(wf, 1);
    assertThat(run.status()).isEqualTo(RunStatus.FAILED);
    assertThat(server.client().runs().steps("throws-after", run.runId()))
        .extracting(StepInfo::name)
        .containsExactly("one");
    assertThat(journaledWithTheEnd(run.runId(), "one")).isTrue();
  }

  @Test
  void aSleepIsTimedFromItsCallNotFromThePreviousStepsWrite() throws Exception {
    Workflow<Integer, Integer> wf =
        Workflow.define("sleep-after", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  int a = ctx.step().run("one", Integer.class, () -> n + 1);
                  ctx.step().sleep("nap", Duration.ofMillis(50));
                  return a;
                });
    RunInfo run = run(wf, 1);
    assertThat(run.status()).isEqualTo(RunStatus.COMPLETED);
    java.util.List<StepInfo> steps = server.client().runs().steps("sleep-after", run.runId());
    assertThat(steps).extracting(StepInfo::name).containsExactly("one", "nap");
    // "one" is written when the body reaches the sleep; the sleep starts at the call, before.
    assertThat(steps.get(1).startedAt()).isBefore(steps.get(0).completedAt());
  }
}
