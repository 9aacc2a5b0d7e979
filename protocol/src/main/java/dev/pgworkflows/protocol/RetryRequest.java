package dev.pgworkflows.protocol;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/retry}: hand the task back to be due again after
 * {@code delayMs}; {@code step} names the failing step for the retry metric.
 */
public record RetryRequest(Long messageId, String receipt, Long delayMs, String step) {}
