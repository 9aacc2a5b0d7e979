package dev.pgworkflows.engine.internal.maintenance;

import dev.pgworkflows.engine.internal.store.TopicStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the runs of event batches whose time has come: every {@code interval} the leading process
 * calls {@code batch_flush_due} until a short answer. A batch's messages wait in the database until
 * then, so a process that dies with a batch half full loses nothing: the next leader starts it.
 * Several processes may run it at once; each batch is started once.
 */
public final class BatchTimer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BatchTimer.class);

  /** Batches started per transaction. */
  static final int BATCH = 100;

  private final TopicStore topics;
  private final Duration interval;
  private ScheduledFuture<?> task;

  public BatchTimer(TopicStore topics, Duration interval) {
    this.topics = topics;
    this.interval = interval;
  }

  /** Starts looking for due batches on {@code scheduler}. */
  public synchronized void start(ScheduledExecutorService scheduler) {
    long ms = interval.toMillis();
    task = scheduler.scheduleWithFixedDelay(this::runOnce, ms, ms, TimeUnit.MILLISECONDS);
  }

  /** Starts every batch whose time has come; returns how many runs it started. */
  public int flushDue() {
    int started = 0;
    List<TopicStore.BatchStarted> round;
    do {
      round = topics.flushDueBatches(BATCH);
      for (TopicStore.BatchStarted b : round) {
        log.debug(
            "started run {} of workflow {} for a batch of {} message(s)",
            b.runId(),
            b.workflow(),
            b.size());
      }
      started += round.size();
    } while (round.size() >= BATCH);
    return started;
  }

  private void runOnce() {
    try {
      flushDue();
    } catch (RuntimeException e) {
      log.warn("starting due event batches failed; trying again in {}", interval, e);
    }
  }

  @Override
  public synchronized void close() {
    if (task != null) {
      task.cancel(false);
    }
  }
}
