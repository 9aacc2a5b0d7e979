package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * The step a completion journals: its name, kind (run, sleep, wait), and output or error.
 *
 * @param state the run state changes journaled with the step, key to value (JSON null removes a
 *     key); absent (or JSON null, read as absent) when there are none, as for most steps
 */
public record StepRecord(
    String name,
    String kind,
    JsonNode output,
    JsonNode error,
    Instant startedAt,
    @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode state) {

  public StepRecord {
    // An explicit JSON null is no changes, the same as absent, on every path that reads it.
    if (state != null && state.isNull()) {
      state = null;
    }
  }

  /** A step without state changes. */
  public StepRecord(String name, String kind, JsonNode output, JsonNode error, Instant startedAt) {
    this(name, kind, output, error, startedAt, null);
  }

  /** The same step carrying {@code changes} (null for none). */
  public StepRecord withState(JsonNode changes) {
    return new StepRecord(name, kind, output, error, startedAt, changes);
  }
}
