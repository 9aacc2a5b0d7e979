package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Retry options an operator sets for one run's retrying step; each one given replaces the code's:
 * {@code attempts} in all, the {@code backoff} kind (fixed, linear or exponential) with its {@code
 * baseMs} and {@code maxMs}, and each attempt's {@code timeoutMs}. In a task, {@code step} names
 * the step they are for.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StepOptions(
    String step, Integer attempts, String backoff, Long baseMs, Long maxMs, Long timeoutMs) {

  /** Options to set (the step is named by the route). */
  public static StepOptions of(
      Integer attempts, String backoff, Long baseMs, Long maxMs, Long timeoutMs) {
    return new StepOptions(null, attempts, backoff, baseMs, maxMs, timeoutMs);
  }
}
