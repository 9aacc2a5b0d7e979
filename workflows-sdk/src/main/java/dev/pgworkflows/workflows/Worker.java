package dev.pgworkflows.workflows;

/**
 * A running worker. {@link #close()} shuts down gracefully: polling stops, steps in flight finish
 * (up to the shutdown timeout) and their runs are handed back for another worker to continue.
 */
public interface Worker extends AutoCloseable {
  /** Runs being handled right now. */
  int inFlight();

  /**
   * What the worker has done since it started, read now (for a metrics library to publish). All
   * zero unless the implementation counts (the SDK's workers do).
   */
  default WorkerMetrics metrics() {
    return new WorkerMetrics(0, 0, 0, 0, 0, 0, 0);
  }

  @Override
  void close();
}
