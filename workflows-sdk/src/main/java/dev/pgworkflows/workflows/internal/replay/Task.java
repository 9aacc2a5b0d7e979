package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;

/** A leased task as the poll returns it. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Task(
    long runId,
    long messageId,
    String receipt,
    int attempt,
    int version,
    String reason,
    JsonNode input,
    List<Entry> journal,
    Instant startedAt,
    String traceContext) {

  /** One journal row. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Entry(
      String name, String kind, JsonNode output, JsonNode error, boolean timedOut) {}
}
