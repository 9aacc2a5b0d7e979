package dev.pgworkflows.protocol;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * {@code POST /v1/workflows/{name}/update-with-start}: the start (its {@code idempotencyKey}
 * required: it names the run a repeat finds), the update's name and input, and how long (0 to 60
 * seconds) to wait for its answer; an {@code Idempotency-Key} header is the update's own key.
 */
public record UpdateWithStartRequest(
    StartRequest start, String update, JsonNode input, Integer waitSeconds) {}
