package dev.pgworkflows.protocol;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * {@code POST /v1/batches}: an action on every run {@code query} selects (its count first: {@code
 * GET /v1/runs/count}). {@code action} is cancel, signal (with {@code event} and {@code payload}),
 * pause, resume or restart (from {@code fromStep}, else from the run's failed step); {@code
 * ratePerSecond} bounds it (default 100); a selection of more than 1000 runs needs {@code confirm}.
 */
public record BulkRequest(
    String action,
    String query,
    String event,
    JsonNode payload,
    String fromStep,
    Integer ratePerSecond,
    Boolean confirm) {}
