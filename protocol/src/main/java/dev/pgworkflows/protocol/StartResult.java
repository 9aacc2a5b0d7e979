package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A start's answer: the run, its status, and whether this call created it; {@code debounced} is
 * true when the start was folded into the pending run of its debounce key (absent otherwise).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StartResult(long runId, String status, boolean created, Boolean debounced)
    implements StartAnswer {

  /** An answer that is not a debounce's. */
  public StartResult(long runId, String status, boolean created) {
    this(runId, status, created, null);
  }

  /** This answer, marked as a start folded into a pending run when {@code folded}. */
  public StartResult debounced(boolean folded) {
    return folded ? new StartResult(runId, status, created, true) : this;
  }
}
