package dev.pgworkflows.protocol;

import java.time.Instant;

/**
 * When a started run is due and how long it may take: a later first task ({@code startAt} or {@code
 * delayMs}), a deadline ({@code deadlineAt}, or {@code deadlineMs} counted from when the run is
 * due) after which the server ends it as {@code timed_out}, and a debounce key with its window
 * ({@code debounceKey}, {@code debounceMs}): starts with the same key collapse into one run with
 * the latest input until its first task is handed out. Every field may be null.
 */
public record StartTiming(
    Instant startAt,
    Long delayMs,
    Instant deadlineAt,
    Long deadlineMs,
    String debounceKey,
    Long debounceMs) {

  /** No timing: the run is due at once, with no deadline and no debounce. */
  public static final StartTiming NONE = new StartTiming(null, null, null, null, null, null);

  /** Whether any field is set. */
  public boolean any() {
    return startAt != null
        || delayMs != null
        || deadlineAt != null
        || deadlineMs != null
        || debounceKey != null
        || debounceMs != null;
  }
}
