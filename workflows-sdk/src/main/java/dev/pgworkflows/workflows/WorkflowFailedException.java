package dev.pgworkflows.workflows;

/** Awaiting a run's result found it failed or cancelled. */
public final class WorkflowFailedException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final RunInfo run;

  public WorkflowFailedException(RunInfo run) {
    super(
        "run "
            + run.runId()
            + " of "
            + run.workflow()
            + " ended "
            + run.status().name().toLowerCase(java.util.Locale.ROOT)
            + (run.error() == null ? "" : ": " + run.error()));
    this.run = run;
  }

  public RunInfo run() {
    return run;
  }
}
