package dev.pgworkflows.server.internal.wait;

import java.util.Deque;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;

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
 */
public final class Waiters {
  /**
   * One waiting poll. Completes with the keys its wake-up already tried in vain (empty for a fresh
   * wake-up), or with null when it stops waiting for another reason (its wait ran out).
   */
  public static final class Waiter extends CompletableFuture<Set<String>> {
    final String queue;
    final String key;

    Waiter(String queue, String key) {
      this.queue = queue;
      this.key = key;
    }
  }

  private final ConcurrentHashMap<String, Deque<Waiter>> byQueue = new ConcurrentHashMap<>();

  /** Registers a poll on {@code queue} that takes what {@code key} names. */
  public Waiter register(String queue, String key) {
    Waiter w = new Waiter(queue, key);
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
    Deque<Waiter> d = byQueue.get(queue);
    if (d == null) {
      return false;
    }
    // In arrival order; a fresh wake-up takes the first, found at the head.
    for (Waiter w : d) {
      if (!tried.contains(w.key) && d.remove(w) && w.complete(tried)) {
        return true;
      }
    }
    return false;
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
