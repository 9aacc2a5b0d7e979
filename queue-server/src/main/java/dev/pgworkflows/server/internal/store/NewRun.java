package dev.pgworkflows.server.internal.store;

/**
 * A start whose fields passed the checks: its input as JSON text, and the trace context its run is
 * given (null when untraced).
 */
public record NewRun(
    String input,
    Integer version,
    String idempotencyKey,
    Integer retentionDays,
    String traceContext) {

  /** The same start, its run given the trace context {@code trace} (null for none). */
  public NewRun traced(String trace) {
    return new NewRun(input, version, idempotencyKey, retentionDays, trace);
  }
}
