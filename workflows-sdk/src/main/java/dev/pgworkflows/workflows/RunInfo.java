package dev.pgworkflows.workflows;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/** A run as the server reports it; input, output and error are raw JSON. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RunInfo(
    long runId,
    String workflow,
    int version,
    RunStatus status,
    JsonNode input,
    JsonNode output,
    JsonNode error,
    String idempotencyKey,
    int retentionDays,
    Waiting waitingFor,
    Instant startedAt,
    Instant completedAt) {

  /** The event a suspended run waits for, if any. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Waiting(String step, String event, JsonNode match) {}
}
