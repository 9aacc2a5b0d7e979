package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.time.Instant;

/**
 * One leased task for a worker: everything needed to replay the run without a second request.
 *
 * @param receipt the lease; every write about this task must present it
 * @param attempt how many times this message was handed out (1 on a first try)
 * @param reason why the run is due: start, resume, signal or timeout
 * @param input the run's input, as JSON text
 * @param journal the run's steps so far, a JSON array of the {@code Step} schema, as JSON text
 * @param traceContext the run's trace, {@code <trace id>-<run span id>-<parent span id>}
 * @param stepOptions the retry options an operator set for the run's retrying step, a JSON object
 *     of the {@code StepOptions} schema whose {@code step} names that step; absent when none
 */
public record Task(
    long runId,
    long messageId,
    String receipt,
    int attempt,
    int version,
    String reason,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String input,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String journal,
    Instant startedAt,
    String traceContext,
    @JsonInclude(JsonInclude.Include.NON_NULL) @JsonRawValue @JsonDeserialize(using = RawJson.class)
        String stepOptions) {

  /** A task without operator's step options. */
  public Task(
      long runId,
      long messageId,
      String receipt,
      int attempt,
      int version,
      String reason,
      String input,
      String journal,
      Instant startedAt,
      String traceContext) {
    this(
        runId,
        messageId,
        receipt,
        attempt,
        version,
        reason,
        input,
        journal,
        startedAt,
        traceContext,
        null);
  }
}
