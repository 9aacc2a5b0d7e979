package dev.pgworkflows.workflows.internal.replay;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Extends a run's lease while one of its steps runs, every third of the lease (at least every half
 * second). A lease that cannot be extended was lost (the run was cancelled, finished or taken
 * over): the step's cancellation is set so cooperative code can stop.
 */
final class Heartbeat {
  private final ScheduledExecutorService scheduler;
  private final long everyMs;

  Heartbeat(ScheduledExecutorService scheduler, Duration leaseDuration) {
    this.scheduler = scheduler;
    this.everyMs = Math.max(500, leaseDuration.toMillis() / 3);
  }

  /** Beats until the returned future is cancelled. */
  ScheduledFuture<?> start(Lease lease, CancellationFlag cancellation) {
    return scheduler.scheduleWithFixedDelay(
        () -> {
          try {
            if (!lease.extend()) {
              cancellation.set();
            }
          } catch (RuntimeException ignored) {
            // the next beat tries again
          }
        },
        everyMs,
        everyMs,
        TimeUnit.MILLISECONDS);
  }
}
