package dev.pgworkflows.server.internal.wait;

import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Wakes a queue's waiters when a delayed message or an expiring visibility makes something
 * receivable, with at most one pending timer per queue (the earliest).
 */
public final class Timers {
  private final ScheduledExecutorService scheduler;
  private final Consumer<String> wake;
  private final ConcurrentHashMap<String, Instant> pending = new ConcurrentHashMap<>();

  public Timers(ScheduledExecutorService scheduler, Consumer<String> wake) {
    this.scheduler = scheduler;
    this.wake = wake;
  }

  /**
   * Whether a timer is already set for the queue, so a caller may skip looking up the next time.
   */
  public boolean isSet(String queue) {
    return pending.containsKey(queue);
  }

  /** Wakes the queue at {@code at} unless an earlier timer is already set. */
  public void wakeAt(String queue, Instant at) {
    Instant[] scheduled = new Instant[1];
    pending.compute(
        queue,
        (q, current) -> {
          if (current != null && !current.isAfter(at)) {
            return current;
          }
          scheduled[0] = at;
          return at;
        });
    if (scheduled[0] != null) {
      long delayMicros = Math.max(0, (at.toEpochMilli() - System.currentTimeMillis()) * 1000 + 500);
      scheduler.schedule(() -> fire(queue, at), delayMicros, TimeUnit.MICROSECONDS);
    }
  }

  private void fire(String queue, Instant at) {
    if (pending.remove(queue, at)) {
      wake.accept(queue);
    }
  }
}
