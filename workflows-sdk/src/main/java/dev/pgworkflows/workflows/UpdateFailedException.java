package dev.pgworkflows.workflows;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * An update's handler threw: the answer the caller gets, with the error the handler's worker sent.
 */
public final class UpdateFailedException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final String update;
  private final transient JsonNode error;

  public UpdateFailedException(String update, JsonNode error) {
    super(
        "update "
            + update
            + " failed: "
            + (error != null && error.hasNonNull("message")
                ? error.get("message").asText()
                : error));
    this.update = update;
    this.error = error;
  }

  /** The update's name. */
  public String update() {
    return update;
  }

  /** The error as journaled: {@code {"type", "message"}}. */
  public JsonNode error() {
    return error;
  }
}
