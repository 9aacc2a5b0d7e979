package dev.pgworkflows.engine.internal.maintenance;

import dev.pgworkflows.engine.internal.store.BulkStore;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Advances the running bulk operations on the leading server: every {@code interval}, a page of
 * each job's rate ({@code bulk_step}, one transaction each). A job a server left mid-way goes on
 * from its last committed page wherever the lead goes.
 */
public final class BulkRunner implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BulkRunner.class);

  private final BulkStore store;
  private final Duration interval;
  private ScheduledFuture<?> task;

  public BulkRunner(BulkStore store, Duration interval) {
    this.store = store;
    this.interval = interval;
  }

  public synchronized void start(ScheduledExecutorService scheduler) {
    long ms = interval.toMillis();
    task = scheduler.scheduleWithFixedDelay(this::runOnce, ms, ms, TimeUnit.MILLISECONDS);
  }

  /** One page of each running job; answers how many runs were acted on. */
  public int stepAll() {
    int acted = 0;
    for (BulkStore.Running job : store.running()) {
      BulkStore.Stepped s = store.step(job.batchId(), job.rate());
      acted += s.acted();
      if (!"running".equals(s.status()) && s.status() != null) {
        log.info("bulk operation {} {}", job.batchId(), s.status());
      }
    }
    return acted;
  }

  private void runOnce() {
    try {
      stepAll();
    } catch (RuntimeException e) {
      log.warn("advancing bulk operations failed; trying again in {}", interval, e);
    }
  }

  @Override
  public synchronized void close() {
    if (task != null) {
      task.cancel(false);
    }
  }
}
