package dev.pgworkflows.workflows;

/**
 * The workflow's code no longer matches its journal: on replay it reached a step other than the one
 * journaled at that point, or used a step name twice. The run fails with this error.
 */
public final class NonDeterministicWorkflowException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  public NonDeterministicWorkflowException(String message) {
    super(message);
  }
}
