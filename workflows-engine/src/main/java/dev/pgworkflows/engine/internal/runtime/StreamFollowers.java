package dev.pgworkflows.engine.internal.runtime;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Readers following a run's streams live, waiting for its next write. A write's transaction
 * notifies {@code #stream:<runId>} on the wake-up channel after commit (from any server); {@link
 * #wake} completes the futures of the run's followers, and each reads again. Nothing here holds a
 * connection: a follower waits on a future of its own. A run's end sends no notification (that
 * would add to the completion's hot path), so a follower also reads again at least every {@link
 * #FALLBACK_MS}, which bounds how late it learns that the run ended or of a notification lost with
 * the LISTEN connection.
 *
 * <p>Each follower holds a request thread while it follows, so this server admits at most {@link
 * #maxOpen()} at once ({@link #enter}), and each answer lasts at most {@link #maxAnswerMillis()}:
 * it then ends without an end event and its client resumes with {@code Last-Event-ID}.
 */
public final class StreamFollowers implements AutoCloseable {
  /** The longest a follower waits without reading again. */
  public static final long FALLBACK_MS = 1_000;

  /** The prefix of the wake-up that names a run whose streams were written. */
  public static final String WAKEUP_PREFIX = "#stream:";

  /** Followers this server admits at once, by default. */
  public static final int MAX_OPEN = 100;

  /** How long one answer follows, by default, before it ends and its client resumes. */
  public static final Duration MAX_ANSWER = Duration.ofMinutes(5);

  private final ConcurrentHashMap<Long, Set<CompletableFuture<Void>>> byRun =
      new ConcurrentHashMap<>();
  private final AtomicInteger open = new AtomicInteger();
  private final int maxOpen;
  private final long maxAnswerMillis;
  private volatile boolean closed;

  public StreamFollowers() {
    this(MAX_OPEN, MAX_ANSWER);
  }

  public StreamFollowers(int maxOpen, Duration maxAnswer) {
    if (maxOpen < 1 || maxAnswer.isNegative() || maxAnswer.isZero()) {
      throw new IllegalArgumentException("followers need room for one and a positive answer time");
    }
    this.maxOpen = maxOpen;
    this.maxAnswerMillis = maxAnswer.toMillis();
  }

  /** The most followers this server admits at once. */
  public int maxOpen() {
    return maxOpen;
  }

  /** How long one answer follows before it ends without an end event. */
  public long maxAnswerMillis() {
    return maxAnswerMillis;
  }

  /** Admits one more follower; false when {@link #maxOpen()} follow already. Pair with leave. */
  public boolean enter() {
    while (true) {
      int n = open.get();
      if (n >= maxOpen) {
        return false;
      }
      if (open.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /** A follower admitted by {@link #enter} has left. */
  public void leave() {
    open.decrementAndGet();
  }

  /** How many followers are admitted now (a test's view). */
  public int following() {
    return open.get();
  }

  /**
   * A future the run's next write completes, for one follower. Take it before reading, so a write
   * that commits between the read and the wait is not missed; then {@link #await} it, or {@link
   * #drop} it when the follower leaves without waiting.
   */
  public CompletableFuture<Void> next(long runId) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    // Added inside compute: a wake (remove) cannot take the set between its lookup and the add.
    byRun.compute(
        runId,
        (id, set) -> {
          Set<CompletableFuture<Void>> s = set != null ? set : ConcurrentHashMap.newKeySet();
          s.add(f);
          return s;
        });
    return f;
  }

  /**
   * Waits for {@code next} (of run {@code runId}) up to {@code millis}, at most {@link
   * #FALLBACK_MS}; false when this server is closing. A future that was not completed is dropped.
   */
  public boolean await(long runId, CompletableFuture<Void> next, long millis)
      throws InterruptedException {
    try {
      if (!closed) {
        next.get(Math.max(1, Math.min(millis, FALLBACK_MS)), TimeUnit.MILLISECONDS);
      }
    } catch (TimeoutException | ExecutionException e) {
      // read again all the same
    } finally {
      drop(runId, next);
    }
    return !closed;
  }

  /** Forgets {@code next} (of run {@code runId}): its follower no longer waits for it. */
  public void drop(long runId, CompletableFuture<Void> next) {
    if (next.isDone()) {
      return; // a wake took it, with its run's set
    }
    byRun.computeIfPresent(
        runId,
        (id, set) -> {
          set.remove(next);
          return set.isEmpty() ? null : set;
        });
  }

  /** How many runs have followers waiting (a test's view). */
  public int runsFollowed() {
    return byRun.size();
  }

  /** A wake-up from the channel: {@code #stream:<runId>}; other payloads are ignored. */
  public void wake(String payload) {
    try {
      wake(Long.parseLong(payload.substring(WAKEUP_PREFIX.length())));
    } catch (NumberFormatException | IndexOutOfBoundsException e) {
      // not ours
    }
  }

  public void wake(long runId) {
    Set<CompletableFuture<Void>> waiting = byRun.remove(runId);
    if (waiting != null) {
      waiting.forEach(f -> f.complete(null));
    }
  }

  /**
   * Wakes every follower: the LISTEN connection came back, and notifications may have been lost.
   */
  public void wakeAll() {
    byRun.keySet().forEach(this::wake);
  }

  /** Followers stop waiting (their answers end without an end event, and their clients resume). */
  @Override
  public void close() {
    closed = true;
    wakeAll();
  }
}
