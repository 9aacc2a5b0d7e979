package dev.pgworkflows.server.testing;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/**
 * A clock a test sets and advances by hand, for a server whose wall-clock readings a test must
 * control. Only what the server reads from its clock moves; the database and {@link
 * System#nanoTime()} keep real time.
 */
public final class SettableClock implements InstantSource {
  private volatile Instant now;

  public SettableClock(Instant start) {
    this.now = start;
  }

  /** A clock standing at the present moment. */
  public static SettableClock atNow() {
    return new SettableClock(Instant.now());
  }

  @Override
  public Instant instant() {
    return now;
  }

  public void set(Instant at) {
    now = at;
  }

  public void advance(Duration by) {
    now = now.plus(by);
  }
}
