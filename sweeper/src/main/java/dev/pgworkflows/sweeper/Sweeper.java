package dev.pgworkflows.sweeper;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes what retention says may go: finished workflow runs past their retention (journal rows
 * cascade), finished outbox rows and old dead letters. Each kind is deleted in batches until a
 * batch comes back short; each batch is its own transaction under a statement timeout. Logs only
 * when something was deleted.
 */
public final class Sweeper implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Sweeper.class);

  /** What one pass deleted. */
  public record Swept(long runs, long deliveries, long deadLetters) {
    public long total() {
      return runs + deliveries + deadLetters;
    }
  }

  /** Told after every pass; metrics hang off this. */
  @FunctionalInterface
  public interface Listener {
    void swept(Swept swept);
  }

  private final DataSource dataSource;
  private final SweeperConfig config;
  private final Listener listener;
  private final AtomicLong passes = new AtomicLong();
  private ScheduledFuture<?> schedule;

  public Sweeper(DataSource dataSource, SweeperConfig config, Listener listener) {
    this.dataSource = dataSource;
    this.config = config;
    this.listener = listener;
  }

  /** Runs a pass every interval on {@code scheduler}. */
  public void start(ScheduledExecutorService scheduler) {
    long ms = config.interval().toMillis();
    schedule = scheduler.scheduleWithFixedDelay(this::passQuietly, ms, ms, TimeUnit.MILLISECONDS);
  }

  /** Passes completed so far; tests wait for this to move. */
  public long passes() {
    return passes.get();
  }

  /** Waits until a pass that started after this call has finished. */
  public void awaitPass(long timeoutMillis) throws InterruptedException {
    long target = passes.get() + 2;
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (passes.get() < target) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("no sweeper pass within " + timeoutMillis + " ms");
      }
      Thread.sleep(5);
    }
  }

  private void passQuietly() {
    try {
      sweepOnce(Instant.now());
    } catch (SQLException | RuntimeException e) {
      log.warn("sweeper pass failed: {}", e.getMessage());
    } finally {
      passes.incrementAndGet();
    }
  }

  /** One full pass as of {@code now}. */
  public Swept sweepOnce(Instant now) throws SQLException {
    long runs =
        drain(
            "SELECT queue.sweep_workflow_runs(?, ?)",
            ps -> {
              ps.setInt(1, config.batchSize());
              ps.setTimestamp(2, Timestamp.from(now));
            });
    Timestamp outboxBefore = Timestamp.from(now.minus(config.outboxRetention()));
    long deliveries =
        drain(
            "SELECT queue.sweep_outbox(?, ?)",
            ps -> {
              ps.setTimestamp(1, outboxBefore);
              ps.setInt(2, config.batchSize());
            });
    Timestamp deadBefore = Timestamp.from(now.minus(config.deadLetterRetention()));
    long dead =
        drain(
            "SELECT queue.sweep_dead_letters(?, ?)",
            ps -> {
              ps.setTimestamp(1, deadBefore);
              ps.setInt(2, config.batchSize());
            });
    Swept swept = new Swept(runs, deliveries, dead);
    if (swept.total() > 0) {
      log.info(
          "swept {} finished runs, {} outbox rows and {} dead letters", runs, deliveries, dead);
    }
    listener.swept(swept);
    return swept;
  }

  private interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  private long drain(String sql, Binder binder) throws SQLException {
    long total = 0;
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        while (true) {
          int n;
          try (Statement s = c.createStatement()) {
            s.execute("SET LOCAL statement_timeout = " + config.statementTimeout().toMillis());
          }
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            binder.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              n = rs.getInt(1);
            }
          }
          c.commit();
          total += n;
          if (n < config.batchSize()) {
            return total;
          }
        }
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  @Override
  public void close() {
    if (schedule != null) {
      schedule.cancel(false);
    }
  }
}
