package dev.pgworkflows.server.internal.engine;

import dev.pgworkflows.server.internal.store.StateStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Long polls waiting for a key of a run's state to be set (or to change past a version), as
 * futures: no request thread or connection is held while one waits. A step completion with state
 * changes that this server journaled wakes the run's waiters at once ({@link #changed}); a change
 * journaled through another server is seen by a check of every waited-on run each {@code interval}
 * (one read per run, only while someone waits), so it costs at most that much latency.
 */
public final class StateWaits {
  private static final Logger log = LoggerFactory.getLogger(StateWaits.class);

  private final LongFunction<List<StateStore.Entry>> read;
  private final ScheduledExecutorService scheduler;
  private final Executor io;
  private final ConcurrentHashMap<Long, Set<Wait>> byRun = new ConcurrentHashMap<>();

  /** One waiting request: answered with the entry once its key is past {@code afterVersion}. */
  private record Wait(
      long runId,
      String key,
      long afterVersion,
      CompletableFuture<Optional<StateStore.Entry>> done) {}

  public StateWaits(
      LongFunction<List<StateStore.Entry>> read,
      ScheduledExecutorService scheduler,
      Executor io,
      Duration interval) {
    this.read = read;
    this.scheduler = scheduler;
    this.io = io;
    scheduler.scheduleWithFixedDelay(
        () -> byRun.keySet().forEach(this::changed),
        interval.toMillis(),
        interval.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /**
   * Waits up to {@code wait} for {@code key} of run {@code runId} to have a version above {@code
   * afterVersion}; completes with the entry, or empty when the wait runs out. The caller has read
   * the state once already and found nothing to answer with.
   */
  public CompletableFuture<Optional<StateStore.Entry>> await(
      long runId, String key, long afterVersion, Duration wait) {
    Wait w = new Wait(runId, key, afterVersion, new CompletableFuture<>());
    byRun.computeIfAbsent(runId, r -> ConcurrentHashMap.newKeySet()).add(w);
    scheduler.schedule(
        () -> w.done().complete(Optional.empty()), wait.toMillis(), TimeUnit.MILLISECONDS);
    w.done().whenComplete((e, t) -> forget(w));
    // A change journaled between the caller's read and the registration is not missed.
    changed(runId);
    return w.done();
  }

  /** The run's state may have changed: its waiters read it again (off the caller's thread). */
  public void changed(long runId) {
    if (!byRun.containsKey(runId)) {
      return;
    }
    io.execute(() -> check(runId));
  }

  private void check(long runId) {
    Set<Wait> waits = byRun.get(runId);
    if (waits == null || waits.isEmpty()) {
      return;
    }
    List<StateStore.Entry> state;
    try {
      state = read.apply(runId);
    } catch (RuntimeException e) {
      log.debug("reading the state of run {} for its waiters failed: {}", runId, e.getMessage());
      return;
    }
    for (Wait w : waits) {
      for (StateStore.Entry e : state) {
        if (e.key().equals(w.key()) && e.version() > w.afterVersion()) {
          w.done().complete(Optional.of(e));
        }
      }
    }
  }

  private void forget(Wait w) {
    byRun.computeIfPresent(
        w.runId(),
        (r, set) -> {
          set.remove(w);
          return set.isEmpty() ? null : set;
        });
  }

  /** How many requests wait, for tests. */
  public int waiting() {
    return byRun.values().stream().mapToInt(Set::size).sum();
  }
}
