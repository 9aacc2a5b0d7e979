package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.protocol.StartTiming;

/**
 * A start whose fields passed the checks: its input as JSON text, the trace context its run is
 * given (null when untraced), and its timing.
 */
public record NewRun(
    String input,
    Integer version,
    String idempotencyKey,
    Integer retentionDays,
    String traceContext,
    StartTiming timing,
    String concurrencyKey,
    Integer priority,
    String attributes) {

  /** A start due at once, with no deadline and no debounce. */
  public NewRun(
      String input,
      Integer version,
      String idempotencyKey,
      Integer retentionDays,
      String traceContext) {
    this(
        input,
        version,
        idempotencyKey,
        retentionDays,
        traceContext,
        StartTiming.NONE,
        null,
        null,
        null);
  }

  /** The same start, its run given the trace context {@code trace} (null for none). */
  public NewRun traced(String trace) {
    return new NewRun(
        input,
        version,
        idempotencyKey,
        retentionDays,
        trace,
        timing,
        concurrencyKey,
        priority,
        attributes);
  }

  /** The same start with a concurrency key and a priority (either may be null). */
  public NewRun withFlow(String key, Integer level) {
    return new NewRun(
        input,
        version,
        idempotencyKey,
        retentionDays,
        traceContext,
        timing,
        key,
        level,
        attributes);
  }

  /** The same start with search attributes (a JSON object as text; null for none). */
  public NewRun withAttributes(String values) {
    return new NewRun(
        input,
        version,
        idempotencyKey,
        retentionDays,
        traceContext,
        timing,
        concurrencyKey,
        priority,
        values);
  }
}
