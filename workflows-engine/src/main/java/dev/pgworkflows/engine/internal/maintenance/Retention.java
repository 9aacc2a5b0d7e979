package dev.pgworkflows.engine.internal.maintenance;

import dev.pgworkflows.sweeper.Sweeper;
import dev.pgworkflows.sweeper.SweeperConfig;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import javax.sql.DataSource;

/**
 * The retention sweeper, run in-process on the server's scheduler: finished runs past their
 * retention are deleted in batches every {@code interval}.
 */
public final class Retention implements AutoCloseable {
  private final Sweeper sweeper;

  /**
   * {@code statementTimeoutMs}: the pool's (0: none). The sweeper's batches are bounded by their
   * own statement timeout, never longer than the pool's, so the database cancels a slow batch
   * before the pool's socket timeout (longer than the pool's statement timeout) abandons it.
   */
  public Retention(
      DataSource pool, Duration interval, long statementTimeoutMs, Sweeper.Listener listener) {
    SweeperConfig config = SweeperConfig.defaults().withInterval(interval);
    if (statementTimeoutMs > 0 && statementTimeoutMs < config.statementTimeout().toMillis()) {
      config = config.withStatementTimeout(Duration.ofMillis(statementTimeoutMs));
    }
    this.sweeper = new Sweeper(pool, config, listener);
  }

  /** Starts sweeping on {@code scheduler}. */
  public void start(ScheduledExecutorService scheduler) {
    sweeper.start(scheduler);
  }

  @Override
  public void close() {
    sweeper.close();
  }
}
