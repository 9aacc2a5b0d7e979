package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.time.Instant;

/**
 * A workflow run as the API shows it; input, output and error as JSON text.
 *
 * @param waitingFor the event a suspended run waits for
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Run(
    long runId,
    String workflow,
    int version,
    String status,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String input,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String output,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String error,
    String idempotencyKey,
    int retentionDays,
    Waiting waitingFor,
    Instant startedAt,
    Instant completedAt) {

  /** The event a suspended run waits for, and the document its payload must contain. */
  public record Waiting(
      String step,
      String event,
      @JsonRawValue @JsonDeserialize(using = RawJson.class) String match) {}
}
