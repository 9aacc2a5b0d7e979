package dev.pgworkflows.workflows.internal.http;

/**
 * A worker's slots as its task stream knows them: the stream open now, how many of its tasks the
 * worker has seen, and how many slots are free. Writes that end a task's use of its slot carry a
 * report of these ({@link #report}), numbered so the server keeps only the newest, and the server
 * sends tasks to fill what is free.
 */
public final class StreamSlots {
  /** The header a report travels in. */
  public static final String HEADER = "Task-Stream-Slots";

  private String stream;
  private long seen;
  private long reports;
  private int free;

  public StreamSlots(int slots) {
    this.free = slots;
  }

  /** A stream opened: the server counts its tasks from zero. */
  public synchronized void opened(String id) {
    stream = id;
    seen = 0;
  }

  /** The stream ended. */
  public synchronized void ended() {
    stream = null;
  }

  /** Tasks of the stream arrived, each to take a slot. */
  public synchronized void received(int n) {
    seen += n;
    free -= n;
  }

  /** A task's slot is free again. */
  public synchronized void freed() {
    free++;
  }

  /** Free slots now; below zero while tasks wait for one. */
  public synchronized int free() {
    return free;
  }

  /**
   * The report for a write after which {@code freeing} more slots are free, or null when no stream
   * is open.
   */
  public synchronized String report(int freeing) {
    if (stream == null) {
      return null;
    }
    return stream
        + " "
        + ++reports
        + " "
        + seen
        + " "
        + Math.max(0, Math.min(1000, free + freeing));
  }
}
