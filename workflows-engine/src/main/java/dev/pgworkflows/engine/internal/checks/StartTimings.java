package dev.pgworkflows.engine.internal.checks;

import dev.pgworkflows.protocol.StartTiming;

/**
 * Checks a start's timing fields before the database does: which go together, which exclude each
 * other, and their ranges. Bounds that depend on the time (at most a year ahead, a deadline after
 * the run is due) are the SQL function's ({@code workflow_timing}), which names the field too.
 */
public final class StartTimings {
  /** A year in milliseconds: the furthest a start may be delayed and the longest deadline. */
  public static final long MAX_MS = 365L * 24 * 3600 * 1000;

  /** A day in milliseconds: the longest debounce window. */
  public static final long MAX_DEBOUNCE_MS = 24L * 3600 * 1000;

  private StartTimings() {}

  /** The timing if it is well-formed; 400 naming the field otherwise. */
  public static StartTiming check(StartTiming t, String idempotencyKey) {
    if (!t.any()) {
      return t;
    }
    if (t.startAt() != null && t.delayMs() != null) {
      throw ApiException.badRequest("delayMs", "delayMs: give startAt or delayMs, not both");
    }
    if (t.deadlineAt() != null && t.deadlineMs() != null) {
      throw ApiException.badRequest(
          "deadlineMs", "deadlineMs: give deadlineAt or deadlineMs, not both");
    }
    if (t.delayMs() != null && (t.delayMs() < 0 || t.delayMs() > MAX_MS)) {
      throw ApiException.badRequest(
          "delayMs", "delayMs must be between 0 and " + MAX_MS + ", got " + t.delayMs());
    }
    if (t.deadlineMs() != null && (t.deadlineMs() < 1 || t.deadlineMs() > MAX_MS)) {
      throw ApiException.badRequest(
          "deadlineMs", "deadlineMs must be between 1 and " + MAX_MS + ", got " + t.deadlineMs());
    }
    if ((t.debounceKey() == null) != (t.debounceMs() == null)) {
      throw ApiException.badRequest(
          t.debounceKey() == null ? "debounceKey" : "debounceMs",
          "debounceKey and debounceMs go together");
    }
    if (t.debounceKey() != null) {
      if (t.debounceKey().isEmpty() || t.debounceKey().length() > 255) {
        throw ApiException.badRequest("debounceKey", "debounceKey must be 1 to 255 characters");
      }
      if (t.debounceMs() < 1 || t.debounceMs() > MAX_DEBOUNCE_MS) {
        throw ApiException.badRequest(
            "debounceMs",
            "debounceMs must be between 1 and " + MAX_DEBOUNCE_MS + ", got " + t.debounceMs());
      }
      if (t.startAt() != null || t.delayMs() != null) {
        throw ApiException.badRequest(
            "debounceKey", "debounceKey cannot be combined with startAt or delayMs");
      }
      if (idempotencyKey != null) {
        throw ApiException.badRequest(
            "debounceKey", "debounceKey cannot be combined with idempotencyKey");
      }
    }
    return t;
  }
}
