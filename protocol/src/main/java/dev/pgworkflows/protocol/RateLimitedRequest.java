package dev.pgworkflows.protocol;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/rate-limited}: the step the task was running was
 * told to back off for {@code retryAfterMs}. Every run of the run's concurrency key is held back
 * until then, this one included; the delivery does not count as an attempt.
 */
public record RateLimitedRequest(Long messageId, String receipt, Long retryAfterMs) {}
