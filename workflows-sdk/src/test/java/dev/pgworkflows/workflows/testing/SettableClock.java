package dev.pgworkflows.workflows.testing;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/** A wall clock a test sets and moves by hand; it stands still otherwise. */
public final class SettableClock implements InstantSource {
  private volatile Instant now;

  public SettableClock(Instant now) {
    this.now = now;
  }

  @Override
  public Instant instant() {
    return now;
  }

  public void set(Instant instant) {
    now = instant;
  }

  public void advance(Duration by) {
    now = now.plus(by);
  }
}
