package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * {@code POST /v1/workflows/{name}/runs}: start a run. Without a version the run takes the newest a
 * worker registered; the same idempotency key answers with the run it started before. The timing
 * fields are those of {@link StartTiming}. A concurrency key limits how many runs of the key run at
 * once and subjects them to the key's rate limit; a priority (0 to 9, higher first) orders due
 * runs. Search attributes are set on the new run as it is made.
 */
public record StartRequest(
    JsonNode input,
    Integer version,
    String idempotencyKey,
    Integer retentionDays,
    @JsonInclude(JsonInclude.Include.NON_NULL) Instant startAt,
    @JsonInclude(JsonInclude.Include.NON_NULL) Long delayMs,
    @JsonInclude(JsonInclude.Include.NON_NULL) Instant deadlineAt,
    @JsonInclude(JsonInclude.Include.NON_NULL) Long deadlineMs,
    @JsonInclude(JsonInclude.Include.NON_NULL) String debounceKey,
    @JsonInclude(JsonInclude.Include.NON_NULL) Long debounceMs,
    @JsonInclude(JsonInclude.Include.NON_NULL) String concurrencyKey,
    @JsonInclude(JsonInclude.Include.NON_NULL) Integer priority,
    @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode attributes) {

  /** A start due at once, with no deadline and no debounce. */
  public StartRequest(
      JsonNode input, Integer version, String idempotencyKey, Integer retentionDays) {
    this(input, version, idempotencyKey, retentionDays, StartTiming.NONE);
  }

  /** A start with the given timing. */
  public StartRequest(
      JsonNode input,
      Integer version,
      String idempotencyKey,
      Integer retentionDays,
      StartTiming timing) {
    this(
        input,
        version,
        idempotencyKey,
        retentionDays,
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

  /** This start with a concurrency key and a priority (either may be null). */
  public StartRequest withFlow(String key, Integer level) {
    return new StartRequest(
        input,
        version,
        idempotencyKey,
        retentionDays,
        startAt,
        delayMs,
        deadlineAt,
        deadlineMs,
        debounceKey,
        debounceMs,
        key,
        level,
        attributes);
  }

  /** This start with search attributes (a JSON object of names to values; null for none). */
  public StartRequest withAttributes(JsonNode values) {
    return new StartRequest(
        input,
        version,
        idempotencyKey,
        retentionDays,
        startAt,
        delayMs,
        deadlineAt,
        deadlineMs,
        debounceKey,
        debounceMs,
        concurrencyKey,
        priority,
        values);
  }

  /** The start's timing fields. */
  public StartTiming timing() {
    return new StartTiming(startAt, delayMs, deadlineAt, deadlineMs, debounceKey, debounceMs);
  }
}
