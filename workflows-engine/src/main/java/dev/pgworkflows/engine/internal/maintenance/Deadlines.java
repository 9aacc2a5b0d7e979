package dev.pgworkflows.engine.internal.maintenance;

import dev.pgworkflows.engine.internal.runtime.RunEnds;
import dev.pgworkflows.engine.internal.store.RunStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends runs whose deadline has passed, without a worker: every {@code interval} the server calls
 * {@code workflow_expire} in batches until a short one, and reports each run it ended (metrics and
 * span) as a cancel does. Several servers may run it at once; each run is ended once.
 */
public final class Deadlines implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Deadlines.class);

  /** Runs ended per transaction. */
  static final int BATCH = 200;

  private final RunStore runs;
  private final RunEnds runEnds;
  private final Duration interval;
  private final InstantSource clock;
  private ScheduledFuture<?> task;

  public Deadlines(RunStore runs, RunEnds runEnds, Duration interval, InstantSource clock) {
    this.runs = runs;
    this.runEnds = runEnds;
    this.interval = interval;
    this.clock = clock;
  }

  /** Starts looking for due deadlines on {@code scheduler}. */
  public synchronized void start(ScheduledExecutorService scheduler) {
    long ms = interval.toMillis();
    task = scheduler.scheduleWithFixedDelay(this::runOnce, ms, ms, TimeUnit.MILLISECONDS);
  }

  /** Ends every run whose deadline has passed; returns how many runs ended, children included. */
  public int expireDue() {
    int ended = 0;
    List<RunStore.Expired> batch;
    do {
      batch = runs.expire(BATCH, clock.instant());
      for (RunStore.Expired e : batch) {
        runEnds.ended(
            e.workflow(),
            e.runId(),
            e.version(),
            e.status(),
            e.startedAt(),
            e.completedAt(),
            e.traceContext());
      }
      ended += batch.size();
    } while (batch.size() >= BATCH);
    return ended;
  }

  private void runOnce() {
    try {
      int ended = expireDue();
      if (ended > 0) {
        log.info("ended {} run(s) past their deadline", ended);
      }
    } catch (RuntimeException e) {
      log.warn("ending runs past their deadline failed; trying again in {}", interval, e);
    }
  }

  @Override
  public synchronized void close() {
    if (task != null) {
      task.cancel(false);
    }
  }
}
