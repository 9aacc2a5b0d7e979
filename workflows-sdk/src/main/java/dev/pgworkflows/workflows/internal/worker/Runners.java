package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.workflows.internal.replay.Task;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's runner threads, one per slot. A thread runs a task on the slot taken for it, then
 * the tasks its completions brought back for that slot ({@link #handOver}), and frees the slot.
 * While the worker closes, tasks are handed back untouched instead of run.
 */
final class Runners {
  private static final Logger log = LoggerFactory.getLogger(Runners.class);

  private final ExecutorService pool;
  private final Slots slots;
  private final TaskRunner<?, ?> runner;
  private final BooleanSupplier stopping;

  /** Tasks a runner thread's last completion brought back for its slot, run next on that thread. */
  private final ThreadLocal<ArrayDeque<Task>> handed = ThreadLocal.withInitial(ArrayDeque::new);

  Runners(
      String workflow,
      int threads,
      Slots slots,
      TaskRunner<?, ?> runner,
      BooleanSupplier stopping) {
    AtomicInteger n = new AtomicInteger();
    this.pool =
        Executors.newFixedThreadPool(
            threads,
            r -> {
              Thread t = new Thread(r, "wf-" + workflow + "-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.slots = slots;
    this.runner = runner;
    this.stopping = stopping;
  }

  /** Runs {@code task} on a runner thread, holding a slot the caller took for it. */
  void dispatch(Task task) {
    slots.started();
    pool.execute(
        () -> {
          try {
            ArrayDeque<Task> more = handed.get();
            for (Task next = task; next != null; next = more.poll()) {
              if (stopping.getAsBoolean()) {
                runner.release(next);
              } else {
                runner.run(next);
              }
            }
          } finally {
            slots.finished();
          }
        });
  }

  /** A task a completion on this runner thread brought back for the thread's slot. */
  void handOver(Task task) {
    handed.get().add(task);
  }

  /**
   * Lets the runs in flight finish, waiting up to {@code timeout}; then interrupts the threads of
   * those still running, whose leases expire so that another worker continues them.
   */
  void shutdown(Duration timeout) throws InterruptedException {
    pool.shutdown();
    if (!pool.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      log.warn(
          "{} runs still in flight after {}; their leases will expire and another worker"
              + " continues them",
          slots.inFlight(),
          timeout);
      pool.shutdownNow();
    }
  }
}
