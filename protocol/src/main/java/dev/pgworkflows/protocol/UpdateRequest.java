package dev.pgworkflows.protocol;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/updates/{update}}: the update's input, and how long
 * (0 to 60 seconds) to wait for its answer; an {@code Idempotency-Key} header makes a repeat answer
 * the first update.
 */
public record UpdateRequest(JsonNode input, Integer waitSeconds) {}
