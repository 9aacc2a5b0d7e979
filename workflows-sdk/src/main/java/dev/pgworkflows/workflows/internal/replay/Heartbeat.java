package dev.pgworkflows.workflows.internal.replay;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Extends a run's lease while one of its steps runs, every third of the lease (at least every half
 * second). A lease that cannot be extended was lost (the run was cancelled, finished or taken
 * over): the step's cancellation is set so cooperative code can stop.
 *
 * <p>The worker's one scheduler thread only times the beats; each extension is a request of its own
 * on {@link #CALLS}. Made on the scheduler thread, the beats of many running steps queued behind
 * one another: with a slow network (every round trip 400 ms, say) and tens of steps running, a
 * step's beat came after its lease had run out, and another worker ran the step again. At most one
 * extension per step is on its way: a beat due while the last one is still out is skipped.
 */
final class Heartbeat {
  private static final ExecutorService CALLS =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "wf-lease-extend");
            t.setDaemon(true);
            return t;
          });

  private final ScheduledExecutorService scheduler;
  private final long everyMs;

  Heartbeat(ScheduledExecutorService scheduler, Duration leaseDuration) {
    this.scheduler = scheduler;
    this.everyMs = Math.max(500, leaseDuration.toMillis() / 3);
  }

  /** Beats until the returned future is cancelled. */
  ScheduledFuture<?> start(Lease lease, CancellationFlag cancellation) {
    AtomicBoolean out = new AtomicBoolean();
    return scheduler.scheduleWithFixedDelay(
        () -> {
          if (!out.compareAndSet(false, true)) {
            return; // the last beat is still on its way
          }
          CALLS.execute(
              () -> {
                try {
                  if (!lease.extend()) {
                    cancellation.set();
                  }
                } catch (RuntimeException ignored) {
                  // the next beat tries again
                } finally {
                  out.set(false);
                }
              });
        },
        everyMs,
        everyMs,
        TimeUnit.MILLISECONDS);
  }
}
