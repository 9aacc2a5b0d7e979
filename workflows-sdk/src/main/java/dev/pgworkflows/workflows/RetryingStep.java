package dev.pgworkflows.workflows;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * A run's retrying step: attempt {@code attempt} of {@code step} failed with {@code error}, and
 * {@code state} says where its retries stand: {@code backoff} (the next attempt is due at {@code
 * nextAttemptAt}), {@code running} (an attempt is out with a worker), {@code paused} (its retries
 * are paused) or {@code run_paused} (the run is paused). {@code options} are the retry options an
 * operator set for it (attempts, backoff, baseMs, maxMs, timeoutMs), null when none.
 */
public record RetryingStep(
    long runId,
    String step,
    int attempt,
    JsonNode error,
    Instant failedAt,
    Instant nextAttemptAt,
    String state,
    boolean paused,
    Instant pausedAt,
    JsonNode options) {}
