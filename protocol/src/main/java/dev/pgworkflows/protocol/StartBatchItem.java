package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * One start of a batch: the fields of a {@link StartRequest} and the caller's W3C trace context,
 * which the run's trace becomes a child of.
 */
public record StartBatchItem(
    JsonNode input,
    Integer version,
    String idempotencyKey,
    Integer retentionDays,
    String traceparent,
    @JsonInclude(JsonInclude.Include.NON_NULL) Instant startAt,
    @JsonInclude(JsonInclude.Include.NON_NULL) Long delayMs,
    @JsonInclude(JsonInclude.Include.NON_NULL) Instant deadlineAt,
    @JsonInclude(JsonInclude.Include.NON_NULL) Long deadlineMs,
    @JsonInclude(JsonInclude.Include.NON_NULL) String debounceKey,
    @JsonInclude(JsonInclude.Include.NON_NULL) Long debounceMs,
    @JsonInclude(JsonInclude.Include.NON_NULL) String concurrencyKey,
    @JsonInclude(JsonInclude.Include.NON_NULL) Integer priority,
    @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode attributes) {

  /** An item due at once, with no deadline and no debounce. */
  public StartBatchItem(
      JsonNode input,
      Integer version,
      String idempotencyKey,
      Integer retentionDays,
      String traceparent) {
    this(input, version, idempotencyKey, retentionDays, traceparent, StartTiming.NONE);
  }

  /** An item with the given timing. */
  public StartBatchItem(
      JsonNode input,
      Integer version,
      String idempotencyKey,
      Integer retentionDays,
      String traceparent,
      StartTiming timing) {
    this(
        input,
        version,
        idempotencyKey,
        retentionDays,
        traceparent,
        timing.startAt(),
        timing.delayMs(),
        timing.deadlineAt(),
        timing.deadlineMs(),
        timing.debounceKey(),
        timing.debounceMs(),
        null,
        null,
        null);
  }

  /** The item's timing fields. */
  public StartTiming timing() {
    return new StartTiming(startAt, delayMs, deadlineAt, deadlineMs, debounceKey, debounceMs);
  }
}
