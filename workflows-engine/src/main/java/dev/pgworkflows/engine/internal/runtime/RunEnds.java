package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.telemetry.RunSpans;
import dev.pgworkflows.engine.internal.telemetry.RunTrace;
import java.time.Instant;
import java.util.function.LongConsumer;

/**
 * What follows the end of a run, however it ended: the run metrics, the run's span, and the readers
 * following its streams on this server (which learn of it at once rather than at their fallback
 * read) and the requests waiting for its state.
 */
public final class RunEnds {
  private final WorkflowEvents events;
  private final RunSpans spans;
  private final LongConsumer streamFollowers;

  public RunEnds(WorkflowEvents events, RunSpans spans, LongConsumer streamFollowers) {
    this.events = events;
    this.spans = spans;
    this.streamFollowers = streamFollowers;
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
    streamFollowers.accept(runId);
  }
}
