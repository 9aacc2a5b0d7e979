package dev.pgworkflows.workflows;

import java.time.Duration;

/**
 * Thrown by a step whose call was refused for now by a rate limit (an HTTP 429 with its {@code
 * Retry-After}, say). The worker hands the run back without counting an attempt and the server
 * holds every run with the same concurrency key back until {@code retryAfter} has passed: due runs
 * of the key are not handed out before then, and runs already running finish their steps. The step
 * is run again after that. A run without a concurrency key is only handed back itself.
 */
public final class RateLimited extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final Duration retryAfter;

  public RateLimited(Duration retryAfter) {
    super("rate limited: retry after " + check(retryAfter).toMillis() + " ms");
    this.retryAfter = retryAfter;
  }

  private static Duration check(Duration retryAfter) {
    if (retryAfter == null || retryAfter.isNegative() || retryAfter.toMillis() > 86_400_000L) {
      throw new IllegalArgumentException("retryAfter must be between 0 and one day");
    }
    return retryAfter;
  }

  /** How long the key is held back from now. */
  public Duration retryAfter() {
    return retryAfter;
  }
}
