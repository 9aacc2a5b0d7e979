package dev.pgworkflows.server.internal.maintenance;

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

  public Retention(DataSource pool, Duration interval, Sweeper.Listener listener) {
    this.sweeper = new Sweeper(pool, SweeperConfig.defaults().withInterval(interval), listener);
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
