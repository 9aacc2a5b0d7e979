package dev.pgworkflows.workflows;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A child run ended without a result: it failed (its error is here) or was cancelled. Thrown into
 * the parent's body, which may catch it; thrown again at the same point on replay.
 */
public final class ChildFailedException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final long childRunId;
  private final String workflow;
  private final RunStatus status;
  private final transient JsonNode error;

  public ChildFailedException(long childRunId, String workflow, RunStatus status, JsonNode error) {
    super(
        "child run "
            + childRunId
            + " of "
            + workflow
            + " ended "
            + status.name().toLowerCase(java.util.Locale.ROOT)
            + (error == null || error.isNull()
                ? ""
                : ": " + error.path("type").asText("") + ": " + error.path("message").asText("")));
    this.childRunId = childRunId;
    this.workflow = workflow;
    this.status = status;
    this.error = error;
  }

  public long childRunId() {
    return childRunId;
  }

  public String workflow() {
    return workflow;
  }

  /** FAILED or CANCELLED. */
  public RunStatus status() {
    return status;
  }

  /** The child's error (type, message, stack, step) when it failed; null when cancelled. */
  public JsonNode error() {
    return error;
  }
}
