package dev.pgworkflows.workflows;

/**
 * A child run a step started. {@link #result()} waits for it durably: the parent's worker is free
 * meanwhile, and the child's end wakes the parent.
 */
public interface ChildRun<O> {
  /** The step that started the child. */
  String step();

  long runId();

  String workflow();

  /**
   * Waits for the child's end (a durable wait journaled as step {@code <step>.result}) and returns
   * its output; throws {@link ChildFailedException} when it failed or was cancelled.
   */
  O result();

  /**
   * The child's end as an arm of {@link StepContext#waitForAny} or {@link StepContext#waitForAll}.
   */
  Arm ended();
}
