package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;

/**
 * An update as it stands: {@code status} is {@code pending} (not answered yet), {@code completed}
 * (with its handler's {@code output}), {@code failed} (its handler threw: {@code error}), {@code
 * refused} (its validator said no, or no handler has its name: {@code error}; nothing journaled) or
 * {@code dropped} (its run ended first). {@code created} is false when an idempotency key found an
 * update sent before; {@code runCreated}, in the answer to an update-with-start, whether it started
 * the run.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record UpdateResult(
    long updateId,
    long runId,
    String update,
    String status,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String output,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String error,
    Boolean created,
    Boolean runCreated) {

  /** An update's answer outside an update-with-start. */
  public UpdateResult(
      long updateId,
      long runId,
      String update,
      String status,
      String output,
      String error,
      Boolean created) {
    this(updateId, runId, update, status, output, error, created, null);
  }

  /** This update, {@code created} as a send found it. */
  public UpdateResult withCreated(Boolean created, Boolean runCreated) {
    return new UpdateResult(updateId, runId, update, status, output, error, created, runCreated);
  }

  /** Whether the update has its answer (or never will). */
  public boolean settled() {
    return !"pending".equals(status);
  }
}
