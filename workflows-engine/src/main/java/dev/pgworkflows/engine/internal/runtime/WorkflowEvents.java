package dev.pgworkflows.engine.internal.runtime;

/** What the workflow routes report as they happen (metrics hang off this). */
public interface WorkflowEvents {
  void started(String workflow);

  /** A run ended; {@code seconds} is its duration when known. */
  void finished(String workflow, String status, Double seconds);

  /** A run took a signal: delivered to its wait, or buffered for a later one (not a duplicate). */
  void signalled(String workflow, String event);

  void stepCompleted(String workflow, String step, double seconds);

  void stepRetried(String workflow, String step);

  /** An update was answered: {@code outcome} completed, failed or refused. */
  default void updated(String workflow, String update, String outcome) {}

  /** Reports nothing. */
  WorkflowEvents NONE =
      new WorkflowEvents() {
        @Override
        public void started(String workflow) {}

        @Override
        public void finished(String workflow, String status, Double seconds) {}

        @Override
        public void signalled(String workflow, String event) {}

        @Override
        public void stepCompleted(String workflow, String step, double seconds) {}

        @Override
        public void stepRetried(String workflow, String step) {}
      };
}
