package dev.pgworkflows.workflows.internal.replay;

import dev.pgworkflows.workflows.Cancellation;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A run's cancellation as step code sees it; set once, by the heartbeat that lost the lease. */
final class CancellationFlag implements Cancellation {
  private final CountDownLatch latch = new CountDownLatch(1);

  void set() {
    latch.countDown();
  }

  @Override
  public boolean isCancelled() {
    return latch.getCount() == 0;
  }

  @Override
  public boolean await(Duration timeout) throws InterruptedException {
    return latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }
}
