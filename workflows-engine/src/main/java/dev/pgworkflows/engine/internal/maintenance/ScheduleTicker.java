package dev.pgworkflows.engine.internal.maintenance;

import dev.pgworkflows.engine.internal.runtime.WorkflowEvents;
import dev.pgworkflows.engine.internal.schedule.Cron;
import dev.pgworkflows.engine.internal.schedule.TickPlan;
import dev.pgworkflows.engine.internal.store.ScheduleStore;
import dev.pgworkflows.protocol.ScheduleState;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the schedules' ticks: every {@code interval} it takes the schedules due by the server's
 * clock (locked, skipping those another server holds), works out each one's ticks and next tick
 * with {@link TickPlan}, and fires them in the same transaction ({@code queue.schedule_fire}, which
 * starts one run per tick, idempotent by the tick's key, under the schedule's overlap policy). A
 * schedule whose tick fails is rolled back alone and tried again on the next pass. Each pass also
 * starts the buffered ticks whose turn came ({@code queue.schedule_drain}).
 */
public final class ScheduleTicker implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ScheduleTicker.class);
  private static final int BATCH = 100;

  private final DataSource pool;
  private final Duration interval;
  private final InstantSource clock;
  private final int maxRetentionDays;
  private final WorkflowEvents events;
  private volatile ScheduledFuture<?> task;

  public ScheduleTicker(
      DataSource pool,
      Duration interval,
      InstantSource clock,
      int maxRetentionDays,
      WorkflowEvents events) {
    this.pool = pool;
    this.interval = interval;
    this.clock = clock;
    this.maxRetentionDays = maxRetentionDays;
    this.events = events;
  }

  /** Ticks on {@code scheduler} every interval. */
  public void start(ScheduledExecutorService scheduler) {
    task =
        scheduler.scheduleWithFixedDelay(
            this::pass, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void pass() {
    try {
      // A full batch may leave more due; a few batches a pass, the rest on the next.
      for (int i = 0; i < 10 && batch() == BATCH; i++) {
        log.debug("a full batch of schedules was due");
      }
      drain();
    } catch (SQLException | RuntimeException e) {
      log.warn("schedule pass failed, next in {} ms: {}", interval.toMillis(), e.getMessage());
    }
  }

  /** One transaction: the due schedules it could lock, each fired. Answers how many it took. */
  int batch() throws SQLException {
    Instant now = clock.instant();
    List<ScheduleStore.Fired> started = new ArrayList<>();
    int taken;
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try {
        List<ScheduleState> due = ScheduleStore.due(c, now, BATCH);
        taken = due.size();
        for (ScheduleState s : due) {
          Savepoint before = c.setSavepoint();
          try {
            started.addAll(fire(c, s, now));
            c.releaseSavepoint(before);
          } catch (SQLException | RuntimeException e) {
            c.rollback(before);
            log.warn("schedule {} did not tick: {}", s.name(), e.getMessage());
          }
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
    for (ScheduleStore.Fired f : started) {
      if (f.created()) {
        events.started(f.workflow());
      }
    }
    return taken;
  }

  /** Starts the buffered ticks of schedules whose last run ended, in one transaction. */
  void drain() throws SQLException {
    List<ScheduleStore.Fired> started;
    try (Connection c = pool.getConnection()) {
      started = ScheduleStore.drain(c, BATCH, maxRetentionDays);
    }
    for (ScheduleStore.Fired f : started) {
      if (f.created()) {
        events.started(f.workflow());
      }
    }
  }

  private List<ScheduleStore.Fired> fire(Connection c, ScheduleState s, Instant now)
      throws SQLException {
    TickPlan plan =
        TickPlan.of(Cron.parse(s.cron(), s.zone()), s.catchUp(), s.maxCatchUp(), s.nextTick(), now);
    List<ScheduleStore.Fired> fired =
        ScheduleStore.fire(c, s.name(), s.nextTick(), plan.ticks(), plan.next(), maxRetentionDays);
    if (plan.ticks().isEmpty()) {
      log.info(
          "schedule {} skipped the ticks it missed from {}; next tick {}",
          s.name(),
          s.nextTick(),
          plan.next());
    }
    return fired;
  }

  @Override
  public void close() {
    ScheduledFuture<?> t = task;
    if (t != null) {
      t.cancel(false);
    }
  }
}
