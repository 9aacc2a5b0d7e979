package dev.pgworkflows.protocol;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One start of a batch: the fields of a {@link StartRequest} and the caller's W3C trace context,
 * which the run's trace becomes a child of.
 */
public record StartBatchItem(
    JsonNode input,
    Integer version,
    String idempotencyKey,
    Integer retentionDays,
    String traceparent) {}
