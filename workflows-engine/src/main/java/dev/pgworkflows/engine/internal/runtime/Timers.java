package dev.pgworkflows.engine.internal.runtime;

import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Wakes a queue's waiters when a delayed message or an expiring visibility makes something
 * receivable. Every due time this server learns of gets its own timer (due times within the same
 * millisecond share one), so a hundred sleeps ending a few milliseconds apart each wake a poller
 * when they end, instead of the first waking it and the rest waiting for a poll to look up the
 * next.
 */
public final class Timers {
  private final ScheduledExecutorService scheduler;
  private final Consumer<String> wake;
  private final InstantSource clock;

  /** Per queue, the due times (epoch milliseconds) of timers not yet fired; never empty. */
  private final ConcurrentHashMap<String, TreeSet<Long>> pending = new ConcurrentHashMap<>();

  /** Timers on {@code scheduler} that call {@code wake}, due times read against {@code clock}. */
  public Timers(ScheduledExecutorService scheduler, Consumer<String> wake, InstantSource clock) {
    this.scheduler = scheduler;
    this.wake = wake;
    this.clock = clock;
  }

  /**
   * Whether a timer is already set for the queue, so a caller may skip looking up the next time.
   */
  public boolean isSet(String queue) {
    return pending.containsKey(queue);
  }

  /** Wakes the queue at {@code at} (rounded up to the millisecond). */
  public void wakeAt(String queue, Instant at) {
    long dueMs = at.toEpochMilli() + (at.getNano() % 1_000_000 == 0 ? 0 : 1);
    boolean[] added = new boolean[1];
    pending.compute(
        queue,
        (q, due) -> {
          TreeSet<Long> set = due == null ? new TreeSet<>() : due;
          added[0] = set.add(dueMs);
          return set;
        });
    if (added[0]) {
      long delayMicros =
          Math.max(0, ChronoUnit.MICROS.between(clock.instant(), Instant.ofEpochMilli(dueMs)));
      scheduler.schedule(() -> fire(queue, dueMs), delayMicros, TimeUnit.MICROSECONDS);
    }
  }

  private void fire(String queue, long dueMs) {
    boolean[] removed = new boolean[1];
    pending.computeIfPresent(
        queue,
        (q, due) -> {
          removed[0] = due.remove(dueMs);
          return due.isEmpty() ? null : due;
        });
    if (removed[0]) {
      wake.accept(queue);
    }
  }
}
