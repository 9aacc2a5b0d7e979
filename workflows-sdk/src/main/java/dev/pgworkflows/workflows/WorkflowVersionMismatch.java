package dev.pgworkflows.workflows;

/** A worker was handed a run of a version its code does not implement. */
public final class WorkflowVersionMismatch extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final int expected;
  private final int got;

  public WorkflowVersionMismatch(String workflow, int expected, int got) {
    super(
        "workflow "
            + workflow
            + " run is version "
            + got
            + " but this worker's code is version "
            + expected);
    this.expected = expected;
    this.got = got;
  }

  public int expected() {
    return expected;
  }

  public int got() {
    return got;
  }
}
