package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;
import java.util.List;

/**
 * What a bulk operation did to each run, newest run first: done, skipped (the run was not in a
 * state the action fits) or failed, with the reason; {@code nextCursor} when more may follow.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record BulkRuns(long batchId, List<Outcome> runs, String nextCursor) {
  /** One run's outcome. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Outcome(long runId, String outcome, String detail, Instant at) {}
}
