package dev.pgworkflows.workflows.internal.worker;

/**
 * How long the worker waits before taking tasks again after the server failed: 0.1 s doubling to 5
 * s.
 */
final class Backoff {
  private static final long FIRST_MS = 100;
  private static final long MAX_MS = 5_000;

  private long ms = FIRST_MS;

  /** The wait the next failure would bring. */
  long nextMs() {
    return ms;
  }

  /** The server answered. */
  void reset() {
    ms = FIRST_MS;
  }

  /** Waits after a failure, and doubles the next wait. */
  void pause() {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ms = Math.min(ms * 2, MAX_MS);
  }
}
