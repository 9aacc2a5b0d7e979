package dev.pgworkflows.workflows.internal.replay;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Extends a run's lease while one of its steps runs, every third of the lease (at least every half
 * second). A lease that cannot be extended was lost (the run was cancelled, finished or taken
 * over): the step's cancellation is set so cooperative code can stop.
 *
 * <p>The worker's one scheduler thread only times the beats; each extension is a request of its own
 * on {@link #CALLS}. Made on the scheduler thread, the beats of many running steps queued behind
 * one another: with a slow network (every round trip 400 ms, say) and tens of steps running, a
 * step's beat came after its lease had run out, and another worker ran the step again. At most one
 * extension per step is on its way: a beat due while the last one is still out is skipped (an
 * extension waits for its answer as long as any request, so one stuck on a dead connection holds
 * the step's later beats back until it fails).
 */
final class Heartbeat {
  private static final Logger log = LoggerFactory.getLogger(Heartbeat.class);

  /**
   * Extensions of all workers in the process. At most one per running step waits, so the queue is
   * bounded by the steps running; the threads are bounded so that thousands of steps on a stalled
   * network do not make thousands of threads.
   */
  private static final ThreadPoolExecutor CALLS = calls(64);

  private final ScheduledExecutorService scheduler;
  private final long everyMs;

  Heartbeat(ScheduledExecutorService scheduler, Duration leaseDuration) {
    this.scheduler = scheduler;
    this.everyMs = Math.max(500, leaseDuration.toMillis() / 3);
  }

  private static ThreadPoolExecutor calls(int threads) {
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "wf-lease-extend");
              t.setDaemon(true);
              return t;
            });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /** Beats until the returned future is cancelled. */
  ScheduledFuture<?> start(Lease lease, CancellationFlag cancellation) {
    AtomicBoolean out = new AtomicBoolean();
    return scheduler.scheduleWithFixedDelay(
        () -> {
          if (!out.compareAndSet(false, true)) {
            return; // the last beat is still on its way
          }
          // A periodic task that throws is never run again: whatever goes wrong here (the pool
          // refusing the task, no memory for a thread) costs this beat only.
          try {
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
          } catch (RuntimeException | Error e) {
            out.set(false);
            log.warn("could not send a lease extension; the next beat tries again", e);
          }
        },
        everyMs,
        everyMs,
        TimeUnit.MILLISECONDS);
  }
}
