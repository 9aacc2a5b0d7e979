package dev.pgworkflows.workflows.internal.worker;

/**
 * Where a worker's tasks come from: its task stream or long polls. The worker's intake thread calls
 * {@link #take} again and again; each task taken is dispatched on a slot taken for it.
 */
interface TaskIntake {
  /** Takes tasks for one stream's or one poll's time; backs off when the server failed. */
  void take();

  /** The worker is closing: asks the server to stop sending tasks. */
  void stop();
}
