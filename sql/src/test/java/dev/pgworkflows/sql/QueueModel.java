package dev.pgworkflows.sql;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * One queue as the docs promise it, in plain collections: messages become visible at a time, a
 * receive leases the visible ones oldest visibility first and counts the receive, a FIFO group
 * hands out only its oldest message, a message received max-receives times goes to the dead letters
 * at its next receive, a redrive sends the dead letters back as new messages. It knows nothing of
 * tables or heads; times are microseconds of a simulated clock.
 */
final class QueueModel {
  /**
   * The visibility of a message the database sent at its own clock (a redrive takes no time), which
   * is before any simulated time; plus the message id, so such messages keep their send order.
   */
  static final long DATABASE_CLOCK = Long.MIN_VALUE / 2;

  static final class Msg {
    final long id;
    final String group;
    final String key;
    long visibleAt;
    int receives;

    Msg(long id, String group, String key, long visibleAt, int receives) {
      this.id = id;
      this.group = group;
      this.key = key;
      this.visibleAt = visibleAt;
      this.receives = receives;
    }

    Msg copy() {
      return new Msg(id, group, key, visibleAt, receives);
    }
  }

  record Dead(long id, String group, String key, int readCount) {}

  record Delivery(long id, String group, String key, int readCount) {}

  /** What one receive chose: the messages it leases and those it dead-letters instead. */
  record Choice(List<Long> leased, List<Long> deadLettered) {
    List<Long> all() {
      List<Long> out = new ArrayList<>(leased);
      out.addAll(deadLettered);
      return out;
    }
  }

  final boolean fifo;
  final Integer maxReceives;
  final int defaultVisibilitySeconds;
  final TreeMap<Long, Msg> live = new TreeMap<>();
  final List<Dead> dead = new ArrayList<>();

  QueueModel(boolean fifo, Integer maxReceives, int defaultVisibilitySeconds) {
    this.fifo = fifo;
    this.maxReceives = maxReceives;
    this.defaultVisibilitySeconds = defaultVisibilitySeconds;
  }

  QueueModel copy() {
    QueueModel c = new QueueModel(fifo, maxReceives, defaultVisibilitySeconds);
    live.forEach((id, m) -> c.live.put(id, m.copy()));
    c.dead.addAll(dead);
    return c;
  }

  void send(long id, String group, String key, long visibleAt) {
    live.put(id, new Msg(id, group, key, visibleAt, 0));
  }

  /** Whether a message may be handed out at all: in a FIFO group, only the oldest one. */
  boolean mayBeHandedOut(Msg m) {
    if (!fifo || m.group == null) {
      return true;
    }
    for (Msg other : live.values()) {
      if (m.group.equals(other.group)) {
        return other == m;
      }
    }
    throw new IllegalStateException("unreachable");
  }

  /** The oldest undeleted message of a group. */
  Msg oldestOf(String group) {
    return live.values().stream().filter(m -> group.equals(m.group)).findFirst().orElse(null);
  }

  /**
   * What a receive of up to {@code qty} messages at {@code now} takes, passing by {@code locked}
   * (held by another open transaction): those visible, oldest visibility first. Each taken message
   * past max receives is dead-lettered in place of being handed out (it still takes its place).
   */
  Choice choose(long now, int qty, Set<Long> locked) {
    List<Msg> visible =
        live.values().stream()
            .filter(m -> !locked.contains(m.id) && m.visibleAt <= now && mayBeHandedOut(m))
            .sorted(Comparator.comparingLong((Msg m) -> m.visibleAt).thenComparingLong(m -> m.id))
            .limit(qty)
            .toList();
    List<Long> leased = new ArrayList<>();
    List<Long> deadLettered = new ArrayList<>();
    for (Msg m : visible) {
      if (maxReceives != null && m.receives >= maxReceives) {
        deadLettered.add(m.id);
      } else {
        leased.add(m.id);
      }
    }
    return new Choice(leased, deadLettered);
  }

  /** Applies a choice: leases for {@code visibilitySeconds}, dead letters; deliveries by id. */
  List<Delivery> apply(Choice choice, long now, Integer visibilitySeconds) {
    int vt = visibilitySeconds == null ? defaultVisibilitySeconds : visibilitySeconds;
    for (long id : choice.deadLettered()) {
      Msg m = live.remove(id);
      dead.add(new Dead(m.id, m.group, m.key, m.receives));
    }
    List<Delivery> out = new ArrayList<>();
    for (long id : choice.leased()) {
      Msg m = live.get(id);
      m.receives++;
      m.visibleAt = now + vt * 1_000_000L;
      out.add(new Delivery(m.id, m.group, m.key, m.receives));
    }
    out.sort(Comparator.comparingLong(Delivery::id));
    return out;
  }

  boolean delete(long id) {
    return live.remove(id) != null;
  }

  /** The new visibility, or null when the message is gone. */
  Long changeVisibility(long id, long now, int seconds) {
    Msg m = live.get(id);
    if (m == null) {
      return null;
    }
    m.visibleAt = now + seconds * 1_000_000L;
    return m.visibleAt;
  }

  /** Takes every dead letter out, oldest first; the caller sends each back as a new message. */
  List<Dead> takeDeadLetters() {
    List<Dead> out = new ArrayList<>(dead);
    dead.clear();
    return out;
  }

  /** Replaces the state of the messages in {@code ids} with their state in {@code other}. */
  void adopt(QueueModel other, Set<Long> ids) {
    for (long id : ids) {
      Msg m = other.live.get(id);
      if (m == null) {
        live.remove(id);
      } else {
        live.put(id, m.copy());
      }
    }
    for (Dead d : other.dead) {
      if (ids.contains(d.id()) && !dead.contains(d)) {
        dead.add(d);
      }
    }
  }
}
