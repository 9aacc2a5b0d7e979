package dev.pgworkflows.protocol;

/** The HTTP headers of the worker protocol, by name, for both ends. */
public final class Headers {
  /** Who a worker is: its id, host and slots, on its polls and streams (all optional). */
  public static final String WORKER_ID = "X-Worker-Id";

  public static final String WORKER_HOST = "X-Worker-Host";
  public static final String WORKER_SLOTS = "X-Worker-Slots";

  /** The labels a worker declares, {@code name=value,name=value} (optional). */
  public static final String WORKER_LABELS = "X-Worker-Labels";

  /** A worker's report of its free slots to its task stream, on the writes that free one. */
  public static final String TASK_STREAM_SLOTS = "Task-Stream-Slots";

  private Headers() {}
}
