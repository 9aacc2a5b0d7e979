package dev.pgworkflows.workflows;

import java.time.Duration;

/**
 * An attempt of a step ran longer than its {@link Retry#withTimeout timeout} and was abandoned. It
 * counts as a failed attempt; when it was the last, the step fails with {@link StepFailedException}
 * whose {@link StepFailedException#errorType() error type} names this class.
 */
public final class StepTimeoutException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  public StepTimeoutException(String step, Duration timeout) {
    super("step " + step + " did not finish within " + timeout.toMillis() + " ms");
  }
}
