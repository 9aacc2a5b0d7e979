package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JavaType;
import dev.pgworkflows.workflows.NonDeterministicWorkflowException;
import dev.pgworkflows.workflows.WorkflowBody;
import dev.pgworkflows.workflows.internal.http.Transport;
import io.opentelemetry.api.OpenTelemetry;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.InstantSource;

/**
 * Replays a run's body against its journal with no server, to learn whether the code still matches
 * the journal. It is the worker's own replay ({@link Replay}) under a lease that refuses every
 * write ({@link Lease#offline}): journaled steps, sleeps, waits, children, parallel groups and
 * values return what the journal holds, and the first act that is not journaled (a new step, value
 * or patch marker, or a wait other than the one the run waits in) unwinds the body before anything
 * is sent. No step's code runs.
 */
public final class ReplayOnly {
  private static final RunEnvironment OFFLINE =
      new RunEnvironment(
          null,
          Duration.ofMinutes(1),
          // A new step stops before it runs, as it does when the worker closes.
          () -> true,
          OpenTelemetry.noop().getTracer("dev.pgworkflows.workflows.replay-only"),
          InstantSource.system(),
          CompletionHook.NONE);

  private ReplayOnly() {}

  /** How a replay ended. */
  public enum Ending {
    /** The body went past its journal's end: it would do new work next. */
    JOURNAL_END,
    /** The body returned while replaying: the run would end with its result. */
    RETURNED,
    /** The body threw while replaying (a journaled failure it does not catch, say). */
    FAILED,
    /** The code does not match the journal. */
    NON_DETERMINISTIC,
    /** The run's input does not read as the workflow's input type. */
    INPUT_UNREADABLE
  }

  /**
   * A replay's end: how, what was thrown (for FAILED, NON_DETERMINISTIC and INPUT_UNREADABLE), and
   * for NON_DETERMINISTIC the journal position (from 1) replay had reached.
   */
  public record Outcome(Ending ending, Throwable error, int position) {}

  /**
   * Replays {@code task} (its input, version and journal) through {@code body}. {@code waitingIn}
   * names the step the run waits in, whose row is not journaled yet (null: none): the body must
   * reach it next, as a wait, when it reaches its journal's end.
   */
  public static <I, O> Outcome replay(
      String workflow, Type inputType, WorkflowBody<I, O> body, Task task, String waitingIn) {
    I input;
    try {
      JavaType type = Transport.JSON.getTypeFactory().constructType(inputType);
      input = Transport.JSON.treeToValue(task.input(), type);
    } catch (Exception e) {
      return new Outcome(Ending.INPUT_UNREADABLE, e, 0);
    }
    Task.Entry pending =
        waitingIn == null ? null : new Task.Entry(waitingIn, "wait", null, null, false);
    Journal journal = new Journal(task.runId(), task.journal(), pending);
    Replay replay = new Replay(workflow, task, journal, Lease.offline(workflow, task), OFFLINE);
    Outcome outcome;
    try {
      body.run(replay, input);
      outcome = new Outcome(Ending.RETURNED, null, 0);
    } catch (Suspend s) {
      if (s.why() != Suspend.Why.JOURNAL_END) {
        throw new IllegalStateException("a replay without a server stopped as " + s.why(), s);
      }
      outcome = new Outcome(Ending.JOURNAL_END, null, 0);
    } catch (NonDeterministicWorkflowException e) {
      outcome = new Outcome(Ending.NON_DETERMINISTIC, e, journal.mismatchAt());
    } catch (Exception | StackOverflowError | AssertionError e) {
      outcome = new Outcome(Ending.FAILED, e, 0);
    }
    NonDeterministicWorkflowException caught = journal.firstMismatch();
    if (caught != null && outcome.ending() != Ending.NON_DETERMINISTIC) {
      // The body caught the mismatch and went on: the run is off its journal all the same.
      return new Outcome(Ending.NON_DETERMINISTIC, caught, journal.mismatchAt());
    }
    if (outcome.ending() == Ending.NON_DETERMINISTIC && outcome.error() != caught) {
      // Found outside the journal's walk (a wait's arms, say): no position of its own.
      return new Outcome(Ending.NON_DETERMINISTIC, outcome.error(), 0);
    }
    return outcome;
  }
}
