package dev.pgworkflows.engine.internal.runtime;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receive-or-wait. A poll registers as a waiter <em>before</em> it tries to receive, so a send that
 * commits between an empty receive and the registration still wakes it. While it waits it is only a
 * future: no request thread, no JDBC connection. Woken by NOTIFY, a timer, or the fallback tick, it
 * tries again on the I/O executor. A waiting poll registered with terms may instead be claimed and
 * handed its answer ({@link #claim}).
 *
 * <p>A receive that took fewer than its {@code max} left nothing its kind of poll could take, as of
 * its snapshot. While no wake-up of the queue has gone unanswered since just before that receive
 * ({@link Waiters#missed}), everything that became receivable since woke some waiting poll or was
 * handed to one. So for a short while ({@link #QUIET_NANOS}) a new poll of the same kind skips its
 * first receive and goes straight to waiting, and the drained receive does not wake another poll of
 * its kind to look again. A worker that has just been answered asks again at once: that poll's
 * receive, and the one of the poll woken after the answer, were two receives for nothing per task.
 */
public final class LongPoll {
  private static final Logger log = LoggerFactory.getLogger(LongPoll.class);
  private static final long RETRY_PAST_MS = 10;

  /** The longest a poll may ask to wait. */
  public static final Duration MAX_WAIT = Duration.ofSeconds(30);

  private final Waiters waiters;
  private final Timers timers;
  private final Executor io;
  private final ScheduledExecutorService scheduler;
  private final Function<String, Optional<Instant>> nextVisibleAt;
  private final InstantSource clock;

  /** How long a looked-up next visible time is used again by polls going to wait. */
  static final long LOOKUP_REUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** A queue's next visible time as last looked up, and when (System.nanoTime()). */
  private record LookedUp(Optional<Instant> next, long atNanos) {}

  private final ConcurrentHashMap<String, LookedUp> lookedUp = new ConcurrentHashMap<>();

  /**
   * How long after a receive that drained its kind of poll a new poll of that kind may skip its
   * first receive. Messages that become receivable only by time passing, with no timer of this
   * server set for them (an expired lease, another server's delay), wake nobody; a poll that skips
   * finds them at its next wake-up or the fallback tick instead of at once. Keeping the while short
   * keeps that rare case rare.
   */
  static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  /**
   * A queue's latest receive that took fewer than its max: the kind of poll ({@code key}), the
   * queue's missed count read just before it, and when it ended (System.nanoTime()).
   */
  private record Drained(String key, long missedMark, long atNanos) {}

  private final ConcurrentHashMap<String, Drained> drained = new ConcurrentHashMap<>();

  /** Set as the server stops: no poll waits any more (see {@link #endWaits}). */
  private volatile boolean ending;

  public LongPoll(
      Waiters waiters,
      Timers timers,
      Executor io,
      ScheduledExecutorService scheduler,
      Function<String, Optional<Instant>> nextVisibleAt,
      InstantSource clock) {
    this.waiters = waiters;
    this.timers = timers;
    this.io = io;
    this.scheduler = scheduler;
    this.nextVisibleAt = nextVisibleAt;
    this.clock = clock;
  }

  /**
   * Receives now, or waits up to {@code waitMillis} for something to receive. The first attempt
   * runs on the caller's thread, so a poll that finds messages completes before this returns.
   * {@code key} names what this poll takes (its match, or its versions): polls with the same key
   * take the same messages. {@code terms}, when not null, lets a {@link #claim} hand the waiting
   * poll its answer; whatever is handed must be what {@code receive} would have returned. {@code
   * receive} returns at most {@code max} messages.
   *
   * @return the messages, possibly empty after the wait ran out
   */
  public <T> CompletableFuture<List<T>> poll(
      String queue, String key, Object terms, long waitMillis, int max, Supplier<List<T>> receive) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
    CompletableFuture<List<T>> result = new CompletableFuture<>();
    attempt(
        new Attempt<>(queue, key, terms, deadline, max, receive, result, null, null),
        null,
        quietSince(queue, key));
    return result;
  }

  /**
   * The missed count a new poll of kind {@code key} may skip its first receive on, or -1: see the
   * class comment.
   */
  private long quietSince(String queue, String key) {
    Drained d = drained.get(queue);
    return d != null && d.key().equals(key) && System.nanoTime() - d.atNanos() < QUIET_NANOS
        ? d.missedMark()
        : -1;
  }

  /**
   * One turn of a task stream: a poll that, when a claim handed it its answer, says how to begin
   * the next turn. Pass that turn's {@link Turn#quietMark} back: the next turn then skips its first
   * receive when no wake-up of the queue went unanswered in between, because whatever became due
   * since the claim woke or was handed to some poll. Pass -1 to receive first, as a poll does. A
   * turn woken when {@code wanted} says false passes its wake-up on and ends empty. {@code receive}
   * returns at most {@code max} tasks.
   */
  public <T> CompletableFuture<Turn<T>> turn(
      String queue,
      String key,
      Object terms,
      long waitMillis,
      int max,
      Supplier<List<T>> receive,
      long quietMark,
      BooleanSupplier wanted) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
    CompletableFuture<List<T>> result = new CompletableFuture<>();
    AtomicLong claimed = new AtomicLong(-1);
    attempt(
        new Attempt<>(queue, key, terms, deadline, max, receive, result, claimed, wanted),
        null,
        quietMark >= 0 ? quietMark : quietSince(queue, key));
    return result.thenApply(tasks -> new Turn<>(tasks, claimed.get()));
  }

  /**
   * What a stream's turn got, and the mark for its next turn: -1 unless a claim handed it the
   * tasks.
   */
  public record Turn<T>(List<T> tasks, long quietMark) {}

  /**
   * Claims a poll of {@code queue} that has waited at least {@code minWaitNanos} on terms {@code
   * fits} accepts, or null when there is none. The claimer must {@linkplain Waiters.Waiter#give
   * give} it its answer, or nothing, in every case; until then the poll waits on, past its deadline
   * if need be.
   */
  public Waiters.Waiter claim(String queue, long minWaitNanos, Predicate<Object> fits) {
    return waiters.claim(queue, minWaitNanos, fits);
  }

  /**
   * Ends the waits of the queue's polls whose terms {@code which} accepts: they answer with nothing
   * at once (a stream's turn that has ended).
   */
  public void dismiss(String queue, Predicate<Object> which) {
    waiters.dismiss(queue, which);
  }

  /**
   * As the server stops: every waiting poll answers now with nothing, as if its wait ran out, and
   * from now on a poll answers at once, without receiving (the worker would take tasks from a
   * server about to go).
   */
  public void endWaits() {
    ending = true;
    // After the flag: a poll registering while this runs is either found here, or reads the flag
    // after its registration (see attempt).
    waiters.dismissAll();
  }

  /**
   * Runs {@code r} on the receive pool after {@code delayMillis}: for work that begins with a
   * receive, which must not hold up the scheduler's timers.
   */
  public void later(Runnable r, long delayMillis) {
    scheduler.schedule(() -> io.execute(r), delayMillis, TimeUnit.MILLISECONDS);
  }

  /** One poll: what it waits on and how it receives. */
  private record Attempt<T>(
      String queue,
      String key,
      Object terms,
      long deadline,
      int max,
      Supplier<List<T>> receive,
      CompletableFuture<List<T>> result,
      AtomicLong claimMark,
      BooleanSupplier wanted) {}

  /**
   * One receive. {@code woken} is what woke this attempt: the keys its wake-up already tried in
   * vain; null for the first attempt. {@code quietMark}, when not -1, skips the receive if no
   * wake-up of the queue was missed since that mark was taken.
   */
  private <T> void attempt(Attempt<T> a, Set<String> woken, long quietMark) {
    String queue = a.queue();
    CompletableFuture<List<T>> result = a.result();
    Waiters.Waiter w = waiters.register(queue, a.key(), a.terms());
    // Registered first: from here every wake-up finds this waiter, and so does endWaits, unless
    // this poll reads its flag. Read before the receive, so that a wake-up missed while it runs
    // counts against a skip it allows.
    long missedMark = waiters.missed(queue);
    boolean skip = ending || (quietMark >= 0 && missedMark == quietMark);
    List<T> got;
    try {
      got = skip ? List.of() : a.receive().get();
    } catch (RuntimeException e) {
      if (woken == null) {
        waiters.remove(w);
        if (w.isDone()) {
          waiters.wakeOne(queue); // do not swallow a wake-up meant for someone
        }
        result.completeExceptionally(e);
        return;
      }
      // The database went away while we waited: keep waiting, and try again on the next
      // wake-up or fallback tick, so polls survive a restart of PostgreSQL.
      log.debug("receive on {} failed while waiting: {}", queue, e.getMessage());
      got = null;
    }
    boolean full = got != null && got.size() >= a.max();
    // A turn no longer wanted (an ended stream) answers without looking: that says nothing.
    if (got != null && !skip && (a.wanted() == null || a.wanted().getAsBoolean())) {
      if (full) {
        drained.remove(queue); // there may be more: the next poll looks
      } else {
        drained.put(queue, new Drained(a.key(), missedMark, System.nanoTime()));
      }
    }
    if (got != null && !got.isEmpty()) {
      waiters.remove(w);
      if (full || w.isDone()) {
        // There may be more than we took, or our registration absorbed a wake-up.
        waiters.wakeOne(queue);
      } else if (woken != null) {
        // Nothing is left for our kind of poll; the wake-up may have been for another kind.
        Set<String> tried = new HashSet<>(woken);
        tried.add(a.key());
        waiters.passOnIfWaiting(queue, tried);
      }
      result.complete(got);
      return;
    }
    if (got != null && woken != null) {
      // Woken for something this poll cannot take (another match, other versions), or that
      // another poll took first: a poll of another kind may take it.
      Set<String> tried = new HashSet<>(woken);
      tried.add(a.key());
      waiters.passOn(queue, tried);
    }
    long remainingNanos = ending ? 0 : a.deadline() - System.nanoTime();
    if (remainingNanos <= 0) {
      waiters.remove(w);
      if (w.isDone()) {
        waiters.wakeOne(queue);
      }
      result.complete(List.of());
      return;
    }
    var timeout =
        scheduler.schedule(
            () -> {
              waiters.remove(w);
              w.complete(null); // no-op when a wake-up or a claim got there first
            },
            remainingNanos,
            TimeUnit.NANOSECONDS);
    w.arm();
    w.thenAcceptAsync(
        tried -> {
          if (tried == null) {
            result.complete(List.of()); // the wait ran out
            return;
          }
          timeout.cancel(false);
          if (tried == Waiters.CLAIMED) {
            w.handed.thenAccept(tasks -> handedOver(a, w, tasks));
          } else if (System.nanoTime() - a.deadline() >= 0
              || (a.wanted() != null && !a.wanted().getAsBoolean())) {
            waiters.passOn(queue, tried); // a wake-up that came too late for us
            result.complete(List.of());
          } else {
            attempt(a, tried, -1);
          }
        },
        io);
    // After arming: the poll may be claimed or woken while the next visible time is looked up.
    armTimer(queue, remainingNanos);
  }

  /** A claimed poll's answer: what it was given, or, given nothing, a receive of its own. */
  @SuppressWarnings("unchecked")
  private <T> void handedOver(Attempt<T> a, Waiters.Waiter w, List<?> tasks) {
    if (!tasks.isEmpty()) {
      if (a.claimMark() != null) {
        a.claimMark().set(w.missedAtClaim);
      }
      a.result().complete((List<T>) tasks);
    } else if (System.nanoTime() - a.deadline() >= 0) {
      a.result().complete(List.of());
    } else {
      io.execute(() -> attempt(a, null, -1));
    }
  }

  /**
   * Makes sure a timer will wake the queue when its next message becomes receivable: one whose
   * visibility time is still ahead. A message visible now that the poll did not get is not one to
   * wake it for (it did not match, or another poll holds it).
   */
  private void armTimer(String queue, long horizonNanos) {
    if (timers.isSet(queue)) {
      return;
    }
    try {
      nextVisible(queue)
          .ifPresent(
              at -> {
                Instant now = clock.instant();
                if (at.isBefore(now.plusNanos(horizonNanos))) {
                  // The database answers only with times still ahead by its clock; one already
                  // past by ours (the clocks differ) is tried again shortly, not at once, so the
                  // difference cannot turn into a loop of wake-ups.
                  timers.wakeAt(queue, at.isAfter(now) ? at : now.plusMillis(RETRY_PAST_MS));
                }
              });
    } catch (RuntimeException e) {
      log.debug("could not look up the next visible time of {}: {}", queue, e.getMessage());
    }
  }

  /**
   * The queue's next visible time. Polls that go to wait one after another share a lookup younger
   * than {@link #LOOKUP_REUSE_NANOS} that still lies ahead. A message delayed in that moment by
   * another server (this server's own short delays set their timers as they are made) gets its
   * timer from the next poll to look up afresh, or is found by the fallback tick, as one delayed
   * after the last poll went to wait always was.
   */
  private Optional<Instant> nextVisible(String queue) {
    long now = System.nanoTime();
    LookedUp last = lookedUp.get(queue);
    if (last != null
        && now - last.atNanos() < LOOKUP_REUSE_NANOS
        && (last.next().isEmpty() || last.next().get().isAfter(clock.instant()))) {
      return last.next();
    }
    Optional<Instant> next = nextVisibleAt.apply(queue);
    lookedUp.put(queue, new LookedUp(next, now));
    return next;
  }
}
