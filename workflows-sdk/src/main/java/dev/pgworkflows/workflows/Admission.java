package dev.pgworkflows.workflows;

import java.util.Locale;

/**
 * What a workflow's concurrency limit made of a start of one of its keys ({@link
 * Started#admission()}), as its {@link ConcurrencyStrategy} decided at the start.
 */
public enum Admission {
  /** The key had room: the run starts when a worker takes it. */
  STARTED,
  /** The key was full: the run waits for a slot. */
  QUEUED,
  /** The key was full and the strategy cancelled the new run. */
  CANCELLED,
  /** The key was full and no run was made; the answer names the key's newest running run. */
  SKIPPED;

  static Admission of(String wire) {
    return wire == null ? null : valueOf(wire.toUpperCase(Locale.ROOT));
  }
}
