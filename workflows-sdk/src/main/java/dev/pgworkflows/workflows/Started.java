package dev.pgworkflows.workflows;

import java.util.List;

/**
 * The answer to a start: the run, its status, whether this call created it, and whether the start
 * was folded into the pending run of its debounce key (see {@link StartOptions.Builder#debounce}).
 * A start of a key whose workflow has a concurrency limit ({@link Concurrency}) also says what the
 * limit's strategy made of it ({@code admission}; null otherwise) and which runs it cancelled
 * ({@code cancelledRuns}, empty when none).
 */
public record Started(
    String workflow,
    long runId,
    RunStatus status,
    boolean created,
    boolean debounced,
    Admission admission,
    List<Long> cancelledRuns) {

  public Started {
    cancelledRuns = cancelledRuns == null ? List.of() : List.copyOf(cancelledRuns);
  }

  /** An answer to a start that was not debounced and whose key has no limit. */
  public Started(String workflow, long runId, RunStatus status, boolean created) {
    this(workflow, runId, status, created, false, null, List.of());
  }
}
