package dev.pgworkflows.workflows;

/** What a running workflow body can see of its run. */
public interface WorkflowContext {
  /** The durable verbs: run, sleep, waitForEvent. */
  StepContext step();

  String workflow();

  long runId();

  int version();

  /** The attempt of the step about to run or running, from 1. */
  int attempt();

  /** Set when the run is cancelled while this worker holds it. */
  Cancellation cancellation();
}
