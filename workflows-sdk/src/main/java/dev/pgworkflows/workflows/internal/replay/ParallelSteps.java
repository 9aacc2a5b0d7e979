package dev.pgworkflows.workflows.internal.replay;

import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.workflows.Branch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.MDC;

/**
 * The body's parallel groups. A group's journaled branches return their stored results; the others
 * run at once, each on a thread of its own with its own retries ({@link BranchAttempts}), under a
 * heartbeat that holds the run's lease, and are journaled as they finish ({@link BranchWrites}).
 * The group returns once every branch is journaled: the results in declaration order, or the
 * failure of the first branch (in declaration order) that ran out of attempts. A branch that is
 * rate-limited is not journaled: once the others are, the run is handed back and its key held back
 * for the longest time any branch was told, as a rate-limited step would.
 */
final class ParallelSteps {
  private final Journal journal;
  private final StepExecution steps;
  private final Lease lease;
  private final Heartbeat heartbeat;
  private final CancellationFlag cancellation;
  private final BranchAttempts attempts;
  private final CompletionHook hook;

  ParallelSteps(
      Journal journal,
      StepExecution steps,
      Lease lease,
      StepTracing tracing,
      CancellationFlag cancellation,
      RunEnvironment env) {
    this.journal = journal;
    this.steps = steps;
    this.lease = lease;
    this.heartbeat = new Heartbeat(env.heartbeats(), env.leaseDuration());
    this.cancellation = cancellation;
    this.attempts =
        new BranchAttempts(tracing, cancellation, env.clock(), env.hook(), env.counters());
    this.hook = env.hook();
  }

  <T> List<T> run(List<? extends Branch<? extends T>> branches) {
    if (branches == null) {
      throw new IllegalArgumentException("a parallel group needs a list of branches");
    }
    List<String> names = new ArrayList<>(branches.size());
    for (Branch<? extends T> b : branches) {
      if (b == null) {
        throw new IllegalArgumentException("a parallel group's branches must not be null");
      }
      names.add(b.name());
    }
    steps.checkOutsideStep(names.isEmpty() ? "parallel" : names.get(0));
    Map<String, Task.Entry> entries = new HashMap<>(journal.group(names));
    List<Branch<? extends T>> missing = new ArrayList<>();
    for (Branch<? extends T> b : branches) {
      if (!entries.containsKey(b.name())) {
        missing.add(b);
      }
    }
    if (!missing.isEmpty()) {
      for (StepRecord s : steps.newSteps(() -> runNew(missing))) {
        Task.Entry e = new Task.Entry(s.name(), s.kind(), s.output(), s.error(), false);
        journal.append(e);
        entries.put(e.name(), e);
      }
    }
    List<T> results = new ArrayList<>(branches.size());
    for (Branch<? extends T> b : branches) {
      Task.Entry e = entries.get(b.name());
      if (Journal.isFailure(e.error())) {
        throw StepErrors.failed(b.name(), e.error());
      }
      results.add(StepValues.convert(e.output(), b.type()));
    }
    return results;
  }

  /**
   * Runs the branches at once and journals each as it finishes; returns their records in journal
   * order once all are journaled. Unwinds the body when the lease was lost on the way.
   */
  private List<StepRecord> runNew(List<? extends Branch<?>> branches) {
    BranchWrites writes = new BranchWrites(lease, hook);
    CountDownLatch settled = new CountDownLatch(branches.size());
    AtomicBoolean abandoned = new AtomicBoolean();
    AtomicLong heldBackMs = new AtomicLong(-1);
    List<Future<?>> running = new ArrayList<>(branches.size());
    Map<String, String> logContext = MDC.getCopyOfContextMap();
    ScheduledFuture<?> beat = heartbeat.start(lease, cancellation);
    try {
      for (Branch<?> b : branches) {
        running.add(
            BranchThreads.start(
                () -> {
                  if (logContext != null) {
                    MDC.setContextMap(logContext);
                  }
                  try {
                    boolean[] limited = {false};
                    StepRecord step =
                        attempts.run(
                            b,
                            d -> {
                              limited[0] = true;
                              heldBackMs.accumulateAndGet(d.toMillis(), Math::max);
                            });
                    if (step != null) {
                      writes.submit(step);
                    } else if (!limited[0]) {
                      abandoned.set(true);
                    }
                  } finally {
                    settled.countDown();
                    MDC.clear();
                  }
                }));
      }
      settled.await();
      List<StepRecord> written = writes.awaitWritten();
      if (abandoned.get()) {
        throw new Suspend(Suspend.Why.LEASE_LOST);
      }
      if (heldBackMs.get() >= 0) {
        // Its siblings are journaled: the run goes back, its key held back as a step's would be,
        // and the rate-limited branches run again when it returns.
        beat.cancel(false);
        String outcome = lease.rateLimited(Duration.ofMillis(heldBackMs.get()));
        throw new Suspend("ok".equals(outcome) ? Suspend.Why.RETRYING : Suspend.Why.LEASE_LOST);
      }
      return written;
    } catch (InterruptedException e) {
      // The worker gave up on this run: its branches stop, and the lease runs out.
      Thread.currentThread().interrupt();
      running.forEach(f -> f.cancel(true));
      throw new Suspend(Suspend.Why.LEASE_LOST);
    } finally {
      beat.cancel(false);
    }
  }
}
