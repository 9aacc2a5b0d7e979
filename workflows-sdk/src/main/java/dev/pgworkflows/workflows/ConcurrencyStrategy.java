package dev.pgworkflows.workflows;

import java.util.Locale;

/**
 * What a start does when its concurrency key already has as many running runs as its workflow's
 * limit allows (see {@link Concurrency}). Running runs are counted whatever they are doing: a run
 * that sleeps or waits for a signal still counts.
 */
public enum ConcurrencyStrategy {
  /** The new run waits for a slot, oldest start first (the default). */
  QUEUE,
  /** The new run cancels the key's oldest running runs, as many as keep it within the limit. */
  CANCEL_IN_PROGRESS,
  /** The new run is made and cancelled at once, so the runs already running keep the key. */
  CANCEL_NEWEST,
  /**
   * No run is made: the start is answered with the key's newest running run ({@link
   * Admission#SKIPPED}, not created). A child's start is made and cancelled instead, as with {@link
   * #CANCEL_NEWEST}, since its parent waits for that very run.
   */
  SKIP;

  /** The strategy's name on the wire: {@code queue}, {@code cancel_in_progress} and so on. */
  String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  static ConcurrencyStrategy of(String wire) {
    return wire == null ? QUEUE : valueOf(wire.toUpperCase(Locale.ROOT));
  }
}
