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
 */
public final class Waiters {
  /** One waiting poll; completes normally when woken. */
  public static final class Waiter extends CompletableFuture<Void> {
    final String queue;

    Waiter(String queue) {
      this.queue = queue;
    }
  }

  private final ConcurrentHashMap<String, Deque<Waiter>> byQueue = new ConcurrentHashMap<>();

  public Waiter register(String queue) {
    Waiter w = new Waiter(queue);
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
    Deque<Waiter> d = byQueue.get(queue);
    if (d == null) {
      return false;
    }
    Waiter w;
    while ((w = d.pollFirst()) != null) {
      if (w.complete(null)) {
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
