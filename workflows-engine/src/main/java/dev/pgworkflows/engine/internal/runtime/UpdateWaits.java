package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.protocol.UpdateResult;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
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
 * Callers waiting for updates' answers, as futures: no thread or connection is held while one
 * waits. An answer made in this process wakes its waiters at once ({@link #answered}); one made
 * through another process is seen by a read of every waited-on update each {@code interval} (one
 * query for all of them, only while someone waits). At most {@link #MAX_WAITS} callers wait.
 */
public final class UpdateWaits {
  /** The most callers waiting at once in one process. */
  public static final int MAX_WAITS = 1000;

  private static final Logger log = LoggerFactory.getLogger(UpdateWaits.class);

  private final Function<Collection<Long>, List<UpdateResult>> read;
  private final ScheduledExecutorService scheduler;
  private final Executor io;
  private final Map<Long, Set<CompletableFuture<UpdateResult>>> byUpdate =
      new ConcurrentHashMap<>();
  private final AtomicInteger waiting = new AtomicInteger();

  public UpdateWaits(
      Function<Collection<Long>, List<UpdateResult>> read,
      ScheduledExecutorService scheduler,
      Executor io,
      Duration interval) {
    this.read = read;
    this.scheduler = scheduler;
    this.io = io;
    scheduler.scheduleWithFixedDelay(
        this::checkAll, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Waits up to {@code wait} for update {@code updateId} to be settled: completes with it then, or
   * with null when the wait runs out. Null when the most callers wait already.
   */
  public CompletableFuture<UpdateResult> await(long updateId, Duration wait) {
    if (waiting.incrementAndGet() > MAX_WAITS) {
      waiting.decrementAndGet();
      return null;
    }
    CompletableFuture<UpdateResult> f = new CompletableFuture<>();
    byUpdate.computeIfAbsent(updateId, k -> ConcurrentHashMap.newKeySet()).add(f);
    CompletableFuture<UpdateResult> answered =
        f.whenComplete(
            (r, t) -> {
              waiting.decrementAndGet();
              byUpdate.computeIfPresent(
                  updateId,
                  (k, set) -> {
                    set.remove(f);
                    return set.isEmpty() ? null : set;
                  });
            });
    try {
      scheduler.schedule(() -> f.complete(null), wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      f.complete(null);
      return answered;
    }
    // An answer made between the caller's read and this registration is not missed.
    answered(List.of(updateId));
    return answered;
  }

  /**
   * Updates {@code ids} may have been answered: their waiters read them again (off this thread).
   */
  public void answered(Collection<Long> ids) {
    List<Long> waited = ids.stream().filter(byUpdate::containsKey).toList();
    if (waited.isEmpty()) {
      return;
    }
    try {
      io.execute(() -> check(waited));
    } catch (RejectedExecutionException e) {
      log.debug("could not read updates {} for their waiters: {}", waited, e.toString());
    }
  }

  private void checkAll() {
    try {
      if (!byUpdate.isEmpty()) {
        List<Long> ids = List.copyOf(byUpdate.keySet());
        io.execute(() -> check(ids));
      }
    } catch (RejectedExecutionException e) {
      log.debug("could not read the updates waited on: {}", e.toString());
    } catch (RuntimeException e) {
      // A periodic task that throws is never run again: keep the checks going.
      log.warn("reading the updates waited on failed", e);
    }
  }

  private void check(List<Long> ids) {
    List<UpdateResult> now;
    try {
      now = read.apply(ids);
    } catch (RuntimeException e) {
      log.debug("reading updates {} for their waiters failed: {}", ids, e.getMessage());
      return;
    }
    Set<Long> found = ConcurrentHashMap.newKeySet();
    for (UpdateResult r : now) {
      found.add(r.updateId());
      if (r.settled()) {
        settle(r.updateId(), r);
      }
    }
    // Deleted while waited on (its run swept): it has no answer to wait for.
    ids.stream().filter(id -> !found.contains(id)).forEach(id -> settle(id, null));
  }

  private void settle(long id, UpdateResult r) {
    Set<CompletableFuture<UpdateResult>> set = byUpdate.get(id);
    if (set != null) {
      List.copyOf(set).forEach(f -> f.complete(r));
    }
  }
}
