package dev.pgworkflows.server.internal.engine;

import dev.pgworkflows.server.internal.telemetry.RunSpans;
import dev.pgworkflows.server.internal.telemetry.RunTrace;
import java.time.Instant;

/** What follows the end of a run, however it ended: the run metrics and the run's span. */
public final class RunEnds {
  private final WorkflowEvents events;
  private final RunSpans spans;

  public RunEnds(WorkflowEvents events, RunSpans spans) {
    this.events = events;
    this.spans = spans;
  }

  /**
   * A run of {@code name} ended with {@code status}; {@code startedAt} and {@code completedAt} give
   * its duration when both are known.
   */
  public void ended(
      String name,
      long runId,
      int version,
      String status,
      Instant startedAt,
      Instant completedAt,
      String traceContext) {
    Double seconds =
        startedAt == null || completedAt == null
            ? null
            : (completedAt.toEpochMilli() - startedAt.toEpochMilli()) / 1000.0;
    events.finished(name, status, seconds);
    spans.runEnded(RunTrace.decode(traceContext), name, version, runId, status, startedAt);
  }
}
