package dev.pgworkflows.workflows;

import java.time.Duration;

/**
 * Tells step code that its run was cancelled. Cancellation is cooperative: code that checks it can
 * stop early; code that ignores it finishes, and its result is discarded (the run stays cancelled).
 */
public interface Cancellation {
  boolean isCancelled();

  /** Throws {@link CancelledException} when the run was cancelled. */
  default void throwIfCancelled() {
    if (isCancelled()) {
      throw new CancelledException();
    }
  }

  /** Waits up to {@code timeout} for cancellation; true when the run was cancelled. */
  boolean await(Duration timeout) throws InterruptedException;

  /** Thrown by {@link #throwIfCancelled()}. */
  final class CancelledException extends WorkflowException {
    private static final long serialVersionUID = 1L;

    public CancelledException() {
      super("the run was cancelled");
    }
  }
}
