package dev.pgworkflows.engine.internal.runtime;

import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * Long polls waiting for a queue, as futures, in arrival order. Nothing here holds a thread or a
 * connection: a waiter is a future in a deque.
 *
 * <p>A wake-up completes one waiter, not all: the woken poll receives, and when it got something it
 * passes the wake-up on ({@link #wakeOne} again), because one notification can stand for many
 * messages. So a burst reaches as many waiters as it has messages, and one message wakes one poll
 * rather than a herd.
 *
 * <p>Polls on one queue may take different messages (a receive's match, a worker's versions): each
 * waiter has a key for what it takes. A poll woken for nothing it could take passes the wake-up on
 * to a waiter with a key not yet tried by that wake-up ({@link #passOn}), so the message reaches a
 * poll that can take it, and a wake-up visits each kind of poll at most once.
 *
 * <p>A waiter that is waiting (not receiving) can also be claimed ({@link #claim}) by whoever has
 * work for it in hand: it stops waiting and answers with what it is {@linkplain Waiter#give given}.
 */
public final class Waiters {
  /**
   * One waiting poll. Completes with the keys its wake-up already tried in vain (empty for a fresh
   * wake-up), or with null when it stops waiting for another reason (its wait ran out).
   */
  public static final class Waiter extends CompletableFuture<Set<String>> {
    final String queue;
    final String key;
    final Object terms;
    final CompletableFuture<List<?>> handed = new CompletableFuture<>();

    /** Set once the poll waits: from then on every way it stops goes through its completion. */
    volatile boolean armed;

    /** When it began to wait (System.nanoTime()), once armed. */
    volatile long armedAt;

    /** The queue's count of missed wake-ups just before a claim took this waiter. */
    volatile long missedAtClaim;

    Waiter(String queue, String key, Object terms) {
      this.queue = queue;
      this.key = key;
      this.terms = terms;
    }

    /** What the poll takes: whatever its owner registered it with. */
    public Object terms() {
      return terms;
    }

    /**
     * Hands a claimed waiter what its poll answers with. Nothing ({@code List.of()}) sends it back
     * to receiving, as a wake-up would.
     */
    public void give(List<?> tasks) {
      handed.complete(tasks);
    }

    /** The poll waits from now on. */
    void arm() {
      armedAt = System.nanoTime();
      armed = true;
    }
  }

  /** What a claimed waiter completes with (an identity, never a set of tried keys). */
  static final Set<String> CLAIMED = Collections.unmodifiableSet(new HashSet<>());

  private final ConcurrentHashMap<String, Deque<Waiter>> byQueue = new ConcurrentHashMap<>();

  /** Per queue, the wake-ups that found no waiter to take them (see {@link #missed}). */
  private final ConcurrentHashMap<String, AtomicLong> missed = new ConcurrentHashMap<>();

  /**
   * Registers a poll on {@code queue} that takes what {@code key} names; {@code terms}, when not
   * null, says what it would take from a {@link #claim}.
   */
  public Waiter register(String queue, String key, Object terms) {
    Waiter w = new Waiter(queue, key, terms);
    byQueue.computeIfAbsent(queue, q -> new ConcurrentLinkedDeque<>()).addLast(w);
    return w;
  }

  /** Forgets a waiter that finished or timed out. */
  public void remove(Waiter w) {
    Deque<Waiter> d = byQueue.get(w.queue);
    if (d != null) {
      d.remove(w);
    }
  }

  /** Wakes the longest-waiting poll of the queue; false when none was waiting. */
  public boolean wakeOne(String queue) {
    return passOn(queue, Set.of());
  }

  /**
   * Wakes the longest-waiting poll of the queue whose key is not in {@code tried}; false when there
   * is none.
   */
  public boolean passOn(String queue, Set<String> tried) {
    if (passOnIfWaiting(queue, tried)) {
      return true;
    }
    missed.computeIfAbsent(queue, q -> new AtomicLong()).incrementAndGet();
    return false;
  }

  /**
   * Wakes the longest-waiting poll of the queue whose key is not in {@code tried}, if there is one;
   * unlike {@link #passOn}, finding none is not a missed wake-up. For a wake-up that may have been
   * meant for another kind of poll when its own poll found something: had it been for this kind, it
   * was answered.
   */
  public boolean passOnIfWaiting(String queue, Set<String> tried) {
    Deque<Waiter> d = byQueue.get(queue);
    if (d != null) {
      // In arrival order; a fresh wake-up takes the first, found at the head.
      for (Waiter w : d) {
        if (!tried.contains(w.key) && d.remove(w) && w.complete(tried)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * How many wake-ups of {@code queue} found no waiter to take them, so far. A poll that was
   * claimed and registers again may skip its receive when this has not moved since the claim: every
   * wake-up in between went to some other waiter.
   */
  public long missed(String queue) {
    AtomicLong n = missed.get(queue);
    return n == null ? 0 : n.get();
  }

  /**
   * Claims the longest-waiting poll of the queue that has waited at least {@code minWaitNanos} and
   * whose terms {@code fits} accepts: it is no longer woken or timed out, and answers with what it
   * is {@linkplain Waiter#give given}, which its claimer must do in every case. Null when there is
   * none.
   */
  public Waiter claim(String queue, long minWaitNanos, Predicate<Object> fits) {
    Deque<Waiter> d = byQueue.get(queue);
    if (d == null) {
      return null;
    }
    for (Waiter w : d) {
      if (w.armed
          && System.nanoTime() - w.armedAt >= minWaitNanos
          && w.terms != null
          && fits.test(w.terms)) {
        // Read before the waiter leaves the deque: a wake-up missed after this moment counts.
        w.missedAtClaim = missed(queue);
        if (d.remove(w) && w.complete(CLAIMED)) {
          return w;
        }
      }
    }
    return null;
  }

  /**
   * Ends the waits of the queue's waiters whose terms {@code which} accepts, as if their time ran
   * out: they no longer take wake-ups or claims.
   */
  public void dismiss(String queue, Predicate<Object> which) {
    Deque<Waiter> d = byQueue.get(queue);
    if (d == null) {
      return;
    }
    for (Waiter w : d) {
      if (w.terms != null && which.test(w.terms) && d.remove(w)) {
        w.complete(null);
      }
    }
  }

  /** Ends every wait, as if its time ran out: the server is stopping. */
  public void dismissAll() {
    byQueue.forEach(
        (q, d) -> {
          for (Waiter w : d) {
            if (d.remove(w)) {
              w.complete(null);
            }
          }
        });
  }

  /** Queues with at least one waiting poll. */
  public Set<String> queuesWaitedOn() {
    Set<String> out = ConcurrentHashMap.newKeySet();
    byQueue.forEach(
        (q, d) -> {
          if (!d.isEmpty()) {
            out.add(q);
          } else {
            byQueue.remove(q, d);
          }
        });
    return out;
  }

  public int waiting() {
    return byQueue.values().stream().mapToInt(Deque::size).sum();
  }
}
