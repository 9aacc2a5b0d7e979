package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.protocol.CompletionOutcome;
import dev.pgworkflows.protocol.RunResult;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.workflows.StepFailedException;
import dev.pgworkflows.workflows.internal.http.Transport;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.time.InstantSource;

/**
 * The writes that end a run's use of its lease, and the one step completion it holds back.
 *
 * <p>A new step's completion is sent with the run's next write: before the next step, sleep or wait
 * begins ({@link #flush}), or together with the run's result when the body returns or throws
 * ({@link #finish}, {@link #fail}). Between the two runs only the body's own code, which holds no
 * side effects (they belong in steps), so a crash in between re-runs the step exactly as a crash
 * before an immediate write would; nothing that could depend on the step's result becomes durable
 * before it. A run's last step costs no round trip of its own: its journal entry and the run's end
 * are one transaction.
 */
final class RunCompletion {
  private final Lease lease;
  private final Journal journal;
  private final CompletionHook hook;
  private final RunStateMap state;
  private final InstantSource clock;
  private Unsent unsent;

  /** A new step's completion not yet sent, with the span its write belongs to. */
  private record Unsent(String name, StepRecord step, Double seconds, Span span) {}

  RunCompletion(
      Lease lease, Journal journal, CompletionHook hook, RunStateMap state, InstantSource clock) {
    this.lease = lease;
    this.journal = journal;
    this.hook = hook;
    this.state = state;
    this.clock = clock;
  }

  /**
   * Holds back a new step's completion until the run's next write; {@code seconds} null for an
   * engine row that is no step of the workflow's (it makes no step metric).
   */
  void hold(String name, StepRecord step, Double seconds, Span span) {
    unsent = new Unsent(name, step, seconds, span);
  }

  /** Ends the run with the body's result (and the last step's completion, if unsent). */
  String finish(Object output) {
    RunResult result;
    try {
      result = new RunResult("completed", Transport.JSON.valueToTree(output), null);
    } catch (RuntimeException e) {
      // The run cannot end; its last step is journaled all the same.
      flush();
      throw e;
    }
    return end(result);
  }

  /** Ends the run as failed with {@code error} (and the last step's completion, if unsent). */
  String fail(Throwable error) {
    ObjectNode json =
        error instanceof StepFailedException sf ? stepError(sf) : StepErrors.json(error, null);
    return end(new RunResult("failed", null, json));
  }

  /**
   * Ends the run and starts its successor with {@code input}, the unsent step completion (if any)
   * journaled in the same transaction; returns what unwinds the body.
   */
  Suspend continueAsNew(Object input) {
    // Converted first: an input that does not serialise fails the run as a body's error would.
    JsonNode json = Transport.JSON.valueToTree(input);
    Unsent u = unsent;
    unsent = null;
    String outcome;
    if (u == null) {
      // The body's last state changes, if any, end the run in a row of their own.
      outcome = lease.continueAsNew(json, state.atEnd(null, clock.instant()), null);
    } else {
      // The write joins the step's trace, as it would have when sent at the step's end.
      Scope scope = u.span().makeCurrent();
      try {
        outcome = lease.continueAsNew(json, state.atEnd(u.step(), clock.instant()), u.seconds());
      } finally {
        scope.close();
      }
      hook.completionCommitted(u.name());
    }
    return new Suspend(
        "ok".equals(outcome) ? Suspend.Why.CONTINUED_AS_NEW : Suspend.Why.LEASE_LOST);
  }

  /** Hands the task back untouched, to be picked up again after {@code delay}. */
  String release(Duration delay) {
    return lease.retryLater(delay, null);
  }

  /**
   * Sends the last new step's completion, if it is still unsent; the lease carries on. Returns the
   * attempt of the run's next step as the server answered it, null when nothing was sent (or the
   * server did not say). Unwinds the body when the lease is no longer this worker's.
   */
  Integer flush() {
    Unsent u = unsent;
    if (u == null) {
      return null;
    }
    unsent = null;
    CompletionOutcome answer;
    // The write joins the step's trace, as it would have when sent at the step's end.
    Scope scope = u.span().makeCurrent();
    try {
      answer = lease.completeInline(u.step(), u.seconds());
    } finally {
      scope.close();
    }
    hook.completionCommitted(u.name());
    if (!"ok".equals(answer.outcome())) {
      throw new Suspend(
          "paused".equals(answer.outcome()) ? Suspend.Why.PAUSED : Suspend.Why.LEASE_LOST);
    }
    return answer.attempt();
  }

  private String end(RunResult result) {
    Unsent u = unsent;
    if (u == null) {
      // The body's last state changes, if any, end the run in a row of their own.
      return lease.finish(result, state.atEnd(null, clock.instant()), null);
    }
    unsent = null;
    String outcome;
    // The write joins the step's trace, as it would have when sent at the step's end.
    Scope scope = u.span().makeCurrent();
    try {
      outcome = lease.finish(result, state.atEnd(u.step(), clock.instant()), u.seconds());
    } finally {
      scope.close();
    }
    hook.completionCommitted(u.name());
    return outcome;
  }

  /** The error the failed step journaled, so the run fails with the step's own stack. */
  private ObjectNode stepError(StepFailedException sf) {
    ObjectNode journaled = journal.errorOf(sf.step());
    return journaled != null ? journaled : StepErrors.json(sf, sf.step());
  }
}
