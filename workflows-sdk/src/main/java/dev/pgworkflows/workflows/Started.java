package dev.pgworkflows.workflows;

/**
 * The answer to a start: the run, its status, whether this call created it, and whether the start
 * was folded into the pending run of its debounce key (see {@link StartOptions.Builder#debounce}).
 */
public record Started(
    String workflow, long runId, RunStatus status, boolean created, boolean debounced) {

  /** An answer to a start that was not debounced. */
  public Started(String workflow, long runId, RunStatus status, boolean created) {
    this(workflow, runId, status, created, false);
  }
}
