package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.TaskStore;
import java.time.InstantSource;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/** The task streams open on this server, and the slot reports workers send with their writes. */
public final class TaskStreams {
  /** Each open stream holds a request thread while it writes; this many at most. */
  public static final int MAX_OPEN = 100;

  private final ConcurrentHashMap<String, TaskStream> open = new ConcurrentHashMap<>();
  private final TaskStore store;
  private final LongPoll longPoll;
  private final Timers timers;
  private final InstantSource clock;

  /** Set as the server stops: a stream opened from then on ends at once. */
  private volatile boolean ending;

  public TaskStreams(TaskStore store, LongPoll longPoll, Timers timers, InstantSource clock) {
    this.store = store;
    this.longPoll = longPoll;
    this.timers = timers;
    this.clock = clock;
  }

  /** Opens a stream; null when this server already has {@value #MAX_OPEN} open. */
  public TaskStream open(
      String name, List<Integer> versions, int slots, int leaseSeconds, int seconds) {
    if (open.size() >= MAX_OPEN) {
      return null;
    }
    TaskStream s =
        new TaskStream(
            UUID.randomUUID().toString(),
            name,
            versions,
            slots,
            leaseSeconds,
            seconds,
            store,
            longPoll,
            timers,
            clock);
    open.put(s.id, s);
    if (ending) {
      s.end(); // it writes its id and ends, as a stream ends
    }
    return s;
  }

  /** Forgets a stream that has ended. */
  public void closed(TaskStream s) {
    open.remove(s.id);
  }

  /** Ends a stream of workflow {@code name}; false when no such stream is open here. */
  public boolean end(String name, String id) {
    TaskStream s = open.get(id);
    if (s == null || !s.name().equals(name)) {
      return false;
    }
    s.end();
    open.remove(id, s); // its room is free as soon as it is ending
    return true;
  }

  /** Ends every stream, and every stream opened later, as the server stops. */
  public void endAll() {
    ending = true;
    open.values().forEach(TaskStream::end);
  }

  /**
   * Applies a report to its stream, when that is open here for workflow {@code name}, with {@code
   * unfilled} more slots free (those that asked a batch for tasks and got none); a report for a
   * stream that ended, or that another server holds, is dropped. Returns whether the stream is open
   * here.
   */
  public boolean apply(String name, SlotReport r, int unfilled) {
    if (r == null) {
      return false;
    }
    TaskStream s = open.get(r.stream());
    if (s == null || !s.name().equals(name)) {
      return false;
    }
    s.report(r.number(), r.seen(), r.free() + unfilled);
    return true;
  }
}
