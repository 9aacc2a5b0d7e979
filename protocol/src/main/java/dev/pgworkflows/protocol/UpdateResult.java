package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;

/**
 * An update as it stands: {@code status} is {@code pending} (not answered yet), {@code completed}
 * (with its handler's {@code output}), {@code failed} (its handler threw: {@code error}), {@code
 * refused} (its validator said no, or no handler has its name: {@code error}; nothing journaled) or
 * {@code dropped} (its run ended first). {@code created} is false when an idempotency key found an
 * update sent before.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record UpdateResult(
    long updateId,
    long runId,
    String update,
    String status,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String output,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String error,
    Boolean created) {

  /** This update, {@code created} as a send found it. */
  public UpdateResult withCreated(Boolean created) {
    return new UpdateResult(updateId, runId, update, status, output, error, created);
  }

  /** Whether the update has its answer (or never will). */
  public boolean settled() {
    return !"pending".equals(status);
  }
}
