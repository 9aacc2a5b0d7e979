package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * A start's answer: the run, its status, and whether this call created it; {@code debounced} is
 * true when the start was folded into the pending run of its debounce key (absent otherwise). A
 * start of a key whose workflow has a concurrency limit says what the limit's strategy made of it
 * ({@code admission}: {@code started}, {@code queued}, {@code cancelled} or {@code skipped}) and
 * which runs it cancelled ({@code cancelledRuns}); both are absent otherwise.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StartResult(
    long runId,
    String status,
    boolean created,
    Boolean debounced,
    String admission,
    List<Long> cancelledRuns)
    implements StartAnswer {

  /** An answer that is not a debounce's nor a limited key's. */
  public StartResult(long runId, String status, boolean created) {
    this(runId, status, created, null, null, null);
  }

  /** An answer with what a concurrency strategy made of the start (both may be null). */
  public StartResult(
      long runId, String status, boolean created, String admission, List<Long> cancelledRuns) {
    this(runId, status, created, null, admission, cancelledRuns);
  }

  /** This answer, marked as a start folded into a pending run when {@code folded}. */
  public StartResult debounced(boolean folded) {
    return folded ? new StartResult(runId, status, created, true, admission, cancelledRuns) : this;
  }
}
