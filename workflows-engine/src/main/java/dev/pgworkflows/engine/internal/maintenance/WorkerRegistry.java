package dev.pgworkflows.engine.internal.maintenance;

import dev.pgworkflows.engine.internal.runtime.WorkerSightings;
import dev.pgworkflows.engine.internal.store.WorkerStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the workers registry: a worker seen for the first time is written at once ({@link
 * #reportNow}); every {@link #interval} the server writes the workers it holds in memory ({@link
 * WorkerSightings}) in one statement, deletes those that said goodbye, and deletes the workers no
 * server has seen for the expiry (only the process that leads the background jobs does that). As
 * the server stops it deletes the workers it reported last, which have gone with it or will be seen
 * by another server.
 */
public final class WorkerRegistry implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(WorkerRegistry.class);

  /** Stale rows deleted per statement. */
  static final int BATCH = 1000;

  private final WorkerSightings sightings;
  private final WorkerStore store;
  private final String server;
  private final long expiryMs;
  private final Duration interval;
  private final BooleanSupplier leading;
  private ScheduledFuture<?> task;

  public WorkerRegistry(
      WorkerSightings sightings,
      WorkerStore store,
      String server,
      long expiryMs,
      BooleanSupplier leading) {
    this.sightings = sightings;
    this.leading = leading;
    this.store = store;
    this.server = server;
    this.expiryMs = expiryMs;
    // Several reports within the expiry, so one late report does not make a worker vanish.
    this.interval = Duration.ofMillis(Math.max(100, Math.min(5_000, expiryMs / 6)));
  }

  /** How often the server writes what it sees. */
  public Duration interval() {
    return interval;
  }

  public synchronized void start(ScheduledExecutorService scheduler) {
    long ms = interval.toMillis();
    task = scheduler.scheduleWithFixedDelay(this::runOnce, 0, ms, TimeUnit.MILLISECONDS);
  }

  /**
   * Writes one worker seen for the first time (or with other versions) at once, so that every
   * server counts it from its first poll, stream or take; a failure leaves it to the next report.
   */
  public void reportNow(WorkerStore.Seen seen) {
    try {
      store.report(server, List.of(seen), List.of());
    } catch (RuntimeException e) {
      log.debug(
          "could not write worker {} at once; the next report will: {}", seen.id(), e.getMessage());
    }
  }

  /** Writes what this server sees now and deletes stale workers. */
  public void report() {
    List<WorkerStore.Seen> seen = sightings.snapshot();
    List<WorkerStore.Gone> gone = sightings.drainGone();
    if (!seen.isEmpty() || !gone.isEmpty()) {
      store.report(server, seen, gone);
    }
    if (!leading.getAsBoolean()) {
      return;
    }
    int expired;
    do {
      expired = store.expire(expiryMs, BATCH);
    } while (expired >= BATCH);
  }

  private void runOnce() {
    try {
      report();
    } catch (RuntimeException e) {
      log.warn("writing the workers this server sees failed; trying again in {}", interval, e);
    }
  }

  @Override
  public synchronized void close() {
    if (task != null) {
      task.cancel(false);
      task = null;
      try {
        store.report(server, List.of(), sightings.all());
      } catch (RuntimeException e) {
        log.debug("could not forget this server's workers as it stops: {}", e.getMessage());
      }
    }
  }
}
