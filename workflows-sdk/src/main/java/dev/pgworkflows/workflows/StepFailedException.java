package dev.pgworkflows.workflows;

/**
 * A step ran out of attempts. Thrown into the workflow body, which may catch it (to compensate); if
 * the body lets it escape, the run fails with this step's error. On replay the same exception is
 * thrown again at the same point, without running the step.
 */
public final class StepFailedException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final String step;
  private final String errorType;
  private final String errorMessage;

  public StepFailedException(String step, String errorType, String errorMessage) {
    super("step " + step + " failed: " + errorType + ": " + errorMessage);
    this.step = step;
    this.errorType = errorType;
    this.errorMessage = errorMessage;
  }

  public String step() {
    return step;
  }

  /** Class name of the exception the step threw on its last attempt. */
  public String errorType() {
    return errorType;
  }

  public String errorMessage() {
    return errorMessage;
  }
}
