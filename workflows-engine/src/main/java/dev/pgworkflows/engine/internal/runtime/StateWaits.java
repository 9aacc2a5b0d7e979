package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.StateStore;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Long polls waiting for a key of a run's state to be set (or to change past a version), as
 * futures: no request thread or connection is held while one waits. A step completion with state
 * changes that this server journaled, or the end of a run here, wakes the run's waiters at once
 * ({@link #changed}); a change or an end through another server is seen by a check of every
 * waited-on run each {@code interval} (one query for all of them, only while someone waits), so it
 * costs at most that much latency. At most {@link #MAX_WAITS} requests wait; a run has at most one
 * check queued or reading at a time, however often it is woken.
 */
public final class StateWaits {
  /** The most requests waiting at once on one server. */
  public static final int MAX_WAITS = 1000;

  private static final Logger log = LoggerFactory.getLogger(StateWaits.class);

  private final Function<Collection<Long>, Map<Long, StateStore.RunState>> read;
  private final ScheduledExecutorService scheduler;
  private final Executor io;
  private final ConcurrentHashMap<Long, Set<Wait>> byRun = new ConcurrentHashMap<>();

  /** Runs with a check queued or reading: a wake while one is pending is covered by it. */
  private final Set<Long> checking = ConcurrentHashMap.newKeySet();

  /** Runs woken while a read of them was queued or under way: read once more after it. */
  private final Set<Long> again = ConcurrentHashMap.newKeySet();

  private final AtomicInteger waiting = new AtomicInteger();
  private final int maxWaits;

  /**
   * What a wait answers: the key's entry when it is past the version waited for, and whether the
   * run was still running when it was read.
   */
  public record Answer(Optional<StateStore.Entry> entry, boolean running) {}

  /** One waiting request: answered once its key is past {@code afterVersion} or the run ends. */
  private record Wait(long runId, String key, long afterVersion, CompletableFuture<Answer> done) {}

  public StateWaits(
      Function<Collection<Long>, Map<Long, StateStore.RunState>> read,
      ScheduledExecutorService scheduler,
      Executor io,
      Duration interval) {
    this(read, scheduler, io, interval, MAX_WAITS);
  }

  /** Waits that hold at most {@code maxWaits} requests at once. */
  public StateWaits(
      Function<Collection<Long>, Map<Long, StateStore.RunState>> read,
      ScheduledExecutorService scheduler,
      Executor io,
      Duration interval,
      int maxWaits) {
    this.maxWaits = maxWaits;
    this.read = read;
    this.scheduler = scheduler;
    this.io = io;
    scheduler.scheduleWithFixedDelay(
        this::checkAll, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Waits up to {@code wait} for {@code key} of run {@code runId} to have a version above {@code
   * afterVersion}; completes with the entry, with none and running false when the run ends first,
   * or with none when the wait runs out. The caller has read the state once already and found
   * nothing to answer with. Null when the most requests wait already.
   */
  public CompletableFuture<Answer> await(long runId, String key, long afterVersion, Duration wait) {
    if (waiting.incrementAndGet() > maxWaits) {
      waiting.decrementAndGet();
      return null;
    }
    Wait w = new Wait(runId, key, afterVersion, new CompletableFuture<>());
    byRun.computeIfAbsent(runId, r -> ConcurrentHashMap.newKeySet()).add(w);
    // What the caller gets completes once the wait is forgotten, so a wait it sees end has left
    // room for another.
    CompletableFuture<Answer> answered = w.done().whenComplete((e, t) -> forget(w));
    try {
      scheduler.schedule(
          () -> w.done().complete(new Answer(Optional.empty(), true)),
          wait.toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // The server is closing: answer now rather than never.
      w.done().complete(new Answer(Optional.empty(), true));
      return answered;
    }
    // A change journaled between the caller's read and the registration is not missed.
    changed(runId);
    return answered;
  }

  /**
   * The run's state may have changed, or the run ended: its waiters read it again (off the caller's
   * thread).
   */
  public void changed(long runId) {
    if (!byRun.containsKey(runId)) {
      return;
    }
    if (!checking.add(runId)) {
      // A read of it is queued or under way: one more follows it, however many wakes come.
      again.add(runId);
      return;
    }
    try {
      io.execute(() -> check(List.of(runId)));
    } catch (RejectedExecutionException e) {
      checking.remove(runId);
    }
  }

  /** Every waited-on run without a check pending, read in one query. */
  private void checkAll() {
    try {
      List<Long> runs =
          byRun.keySet().stream()
              .filter(
                  r -> {
                    if (checking.add(r)) {
                      return true;
                    }
                    again.add(r);
                    return false;
                  })
              .toList();
      if (!runs.isEmpty()) {
        try {
          io.execute(() -> check(runs));
        } catch (RejectedExecutionException e) {
          runs.forEach(checking::remove);
        }
      }
    } catch (RuntimeException e) {
      // A periodic task that throws is never run again: keep the checks going.
      log.warn("checking the runs waited on for state failed", e);
    }
  }

  private void check(List<Long> runs) {
    Map<Long, StateStore.RunState> states;
    try {
      // The wakes so far are covered by this read; one from here on asks for another after it.
      runs.forEach(again::remove);
      states = read.apply(runs);
    } catch (RuntimeException e) {
      log.debug("reading the state of runs {} for their waiters failed: {}", runs, e.getMessage());
      return;
    } finally {
      for (long runId : runs) {
        checking.remove(runId);
        if (again.remove(runId)) {
          changed(runId);
        }
      }
    }
    for (long runId : runs) {
      Set<Wait> waits = byRun.get(runId);
      if (waits == null) {
        continue;
      }
      StateStore.RunState s = states.get(runId);
      for (Wait w : waits) {
        if (s == null) {
          // Deleted while waited on (retention): it sets nothing more.
          w.done().complete(new Answer(Optional.empty(), false));
          continue;
        }
        Optional<StateStore.Entry> found =
            s.state().stream()
                .filter(e -> e.key().equals(w.key()) && e.version() > w.afterVersion())
                .findFirst();
        if (found.isPresent() || !s.running()) {
          w.done().complete(new Answer(found, s.running()));
        }
      }
    }
  }

  private void forget(Wait w) {
    waiting.decrementAndGet();
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
