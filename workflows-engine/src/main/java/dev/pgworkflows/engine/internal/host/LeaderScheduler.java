package dev.pgworkflows.engine.internal.host;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A scheduler whose repeating tasks skip their turns while {@code leading} is false. One-off tasks
 * (a delivery's retry, a nudge) run as scheduled: they follow from work this process took on.
 */
final class LeaderScheduler extends ScheduledThreadPoolExecutor {
  private final BooleanSupplier leading;

  LeaderScheduler(int threads, ThreadFactory factory, BooleanSupplier leading) {
    super(threads, factory);
    this.leading = leading;
  }

  private Runnable gated(Runnable task) {
    return () -> {
      if (leading.getAsBoolean()) {
        task.run();
      }
    };
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(
      Runnable command, long initialDelay, long delay, TimeUnit unit) {
    return super.scheduleWithFixedDelay(gated(command), initialDelay, delay, unit);
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(
      Runnable command, long initialDelay, long period, TimeUnit unit) {
    return super.scheduleAtFixedRate(gated(command), initialDelay, period, unit);
  }
}
