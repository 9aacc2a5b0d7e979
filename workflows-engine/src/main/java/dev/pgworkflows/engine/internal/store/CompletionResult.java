package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.protocol.CompletionOutcome;

/** A completion's outcome and, for one that may have ended its run, what that run's end needs. */
public record CompletionResult(CompletionOutcome outcome, RunEnd runEnd) {

  /** An outcome with no run end. */
  public static CompletionResult of(CompletionOutcome outcome) {
    return new CompletionResult(outcome, RunEnd.NONE);
  }

  public boolean rejected() {
    return "rejected".equals(outcome.outcome());
  }
}
