package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.TaskStore;
import dev.pgworkflows.protocol.Names;
import java.time.InstantSource;

/**
 * A task handed back to be due again after a delay (a step's retry backoff, or a worker giving back
 * a task it will not run): the database makes it invisible until then, and a timer on this server
 * wakes its pollers when it is due soon.
 */
public final class Retries {
  /** A task due again within this long gets a timer on this server (a retry sends no NOTIFY). */
  private static final long TIMER_HORIZON_MS = 60_000;

  private final TaskStore store;
  private final Timers timers;
  private final WorkflowEvents events;
  private final InstantSource clock;

  public Retries(TaskStore store, Timers timers, WorkflowEvents events, InstantSource clock) {
    this.store = store;
    this.timers = timers;
    this.events = events;
    this.clock = clock;
  }

  /**
   * Hands the task back; {@code step}, when given, names the failing step (with its {@code error},
   * JSON text or null) for the run's retrying step and the retry metric.
   *
   * @return the outcome: ok, not_running or stale
   */
  public String retry(
      String name,
      long runId,
      long messageId,
      long receipt,
      long delayMs,
      String step,
      String error) {
    String outcome = store.retry(runId, messageId, receipt, delayMs, step, error);
    if ("ok".equals(outcome) && delayMs <= TIMER_HORIZON_MS) {
      // The task is due again soon (at once, for a task handed back): wake this server's
      // pollers then, as after a short sleep.
      timers.wakeAt(Names.workflowQueue(name), clock.instant().plusMillis(delayMs));
    }
    if ("ok".equals(outcome) && step != null) {
      events.stepRetried(name, step);
    }
    return outcome;
  }
}
