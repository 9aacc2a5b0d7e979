package dev.pgworkflows.workflows.internal.replay;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads parallel branches run on, shared by the process's workers: a thread per branch
 * running, kept for a minute once idle so that fan-outs one after another reuse them. Daemon
 * threads, so a branch left running does not keep the process alive.
 */
final class BranchThreads {
  private static final AtomicInteger COUNT = new AtomicInteger();
  private static final ExecutorService POOL =
      new ThreadPoolExecutor(
          0,
          Integer.MAX_VALUE,
          60,
          TimeUnit.SECONDS,
          new SynchronousQueue<>(),
          r -> {
            Thread t = new Thread(r, "wf-branch-" + COUNT.incrementAndGet());
            t.setDaemon(true);
            return t;
          });

  private BranchThreads() {}

  /** Runs {@code branch} on a thread of its own. */
  static Future<?> start(Runnable branch) {
    return POOL.submit(branch);
  }
}
