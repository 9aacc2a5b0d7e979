package dev.pgworkflows.protocol;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * {@code POST /v1/workflows/{name}/runs}: start a run. Without a version the run takes the newest a
 * worker registered; the same idempotency key answers with the run it started before.
 */
public record StartRequest(
    JsonNode input, Integer version, String idempotencyKey, Integer retentionDays) {}
