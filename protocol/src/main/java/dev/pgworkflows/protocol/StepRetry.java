package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.time.Instant;

/**
 * A run's retrying step: the step whose attempt {@code attempt} failed with {@code error}, and
 * where its retries stand: {@code state} backoff (the next attempt is due at {@code
 * nextAttemptAt}), running (an attempt is out with a worker), paused (its retries are paused) or
 * run_paused (the run is). {@code options} are those an operator set for it, if any.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StepRetry(
    long runId,
    String step,
    int attempt,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String error,
    Instant failedAt,
    Instant nextAttemptAt,
    String state,
    boolean paused,
    Instant pausedAt,
    StepOptions options) {}
