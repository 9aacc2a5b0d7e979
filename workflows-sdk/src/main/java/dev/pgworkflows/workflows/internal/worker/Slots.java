package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.workflows.internal.link.SlotReports;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A worker's slots, all their accounting in one place: a slot is taken before a task is dispatched
 * (a long poll reserves as many as it asks tasks for, a streamed task takes one as it arrives) and
 * freed when its runner thread is done with it. The task stream's view is kept beside: its tasks
 * seen and the slots free as it knows them, which writes report to the server ({@link #report}),
 * numbered so the server keeps only the newest.
 */
final class Slots implements SlotReports {
  private final Semaphore free;
  private final AtomicInteger inFlight = new AtomicInteger();

  // The task stream's view; guarded by this.
  private String stream;
  private long seen;
  private long reports;
  private int streamFree;

  Slots(int capacity) {
    this.free = new Semaphore(capacity);
    this.streamFree = capacity;
  }

  /**
   * For a long poll: waits up to a second for a free slot, then takes every free slot, up to {@code
   * max}. Returns how many were taken, 0 when none came free.
   */
  int reserve(int max) throws InterruptedException {
    if (!free.tryAcquire(1, TimeUnit.SECONDS)) {
      return 0;
    }
    int taken = 1 + free.drainPermits();
    if (taken > max) {
      free.release(taken - max);
      taken = max;
    }
    return taken;
  }

  /** Gives back slots reserved for tasks that did not come. */
  void unreserve(int n) {
    free.release(n);
  }

  /** Takes a slot for a streamed task, waiting until one is free. */
  void acquire() {
    free.acquireUninterruptibly();
  }

  /** Whether every slot is taken. */
  boolean saturated() {
    return free.availablePermits() == 0;
  }

  /** A task was dispatched on a slot taken for it. */
  void started() {
    inFlight.incrementAndGet();
  }

  /** A runner thread is done with its slot. */
  void finished() {
    inFlight.decrementAndGet();
    synchronized (this) {
      streamFree++;
    }
    free.release();
  }

  /** Tasks being handled now. */
  int inFlight() {
    return inFlight.get();
  }

  /** A stream opened: the server counts its tasks from zero. */
  synchronized void streamOpened(String id) {
    stream = id;
    seen = 0;
  }

  /** The stream ended. */
  synchronized void streamEnded() {
    stream = null;
  }

  /** Tasks of the stream arrived, each to take a slot. */
  synchronized void streamed(int n) {
    seen += n;
    streamFree -= n;
  }

  @Override
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
        + Math.max(0, Math.min(1000, streamFree + freeing));
  }
}
