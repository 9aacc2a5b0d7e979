package dev.pgworkflows.engine.internal.store;

import java.time.Instant;

/**
 * What a run's span and metrics need, read with a completion: {@code completedAt} is set when the
 * completion ended the run.
 */
public record RunEnd(Integer version, Instant startedAt, Instant completedAt, String traceContext) {

  /** Nothing known: the completion did not end its run. */
  public static final RunEnd NONE = new RunEnd(null, null, null, null);

  /** Whether the completion ended its run. */
  public boolean ended() {
    return completedAt != null;
  }
}
