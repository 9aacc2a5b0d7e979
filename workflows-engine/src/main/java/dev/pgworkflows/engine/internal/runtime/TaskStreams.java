package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.TaskStore;
import java.io.OutputStream;
import java.time.InstantSource;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The task streams open on this server, and the slot reports workers send with their writes. */
public final class TaskStreams {
  private static final Logger log = LoggerFactory.getLogger(TaskStreams.class);

  /**
   * Open streams at most unless configured. A stream holds no thread (its writes go through {@link
   * #WRITERS} shared threads), so this bounds memory: a connection and a few small objects each.
   */
  public static final int MAX_OPEN = 5_000;

  /** The threads that write every stream's lines. */
  static final int WRITERS = 4;

  private final ConcurrentHashMap<String, TaskStream> open = new ConcurrentHashMap<>();
  private final TaskStore store;
  private final LongPoll longPoll;
  private final Timers timers;
  private final InstantSource clock;
  private final ScheduledExecutorService timer;
  private final ThreadPoolExecutor writers;
  private final int maxOpen;

  /** Set as the server stops: a stream opened from then on ends at once. */
  private volatile boolean ending;

  /**
   * At most {@code maxOpen} streams, whose deadlines and keep-alives (one sweep over the open
   * streams, for as long as {@code timer} runs) run on {@code timer}.
   */
  public TaskStreams(
      TaskStore store,
      LongPoll longPoll,
      Timers timers,
      InstantSource clock,
      ScheduledExecutorService timer,
      int maxOpen) {
    this.maxOpen = maxOpen;
    this.store = store;
    this.longPoll = longPoll;
    this.timers = timers;
    this.clock = clock;
    this.timer = timer;
    AtomicInteger n = new AtomicInteger();
    this.writers =
        new ThreadPoolExecutor(
            WRITERS,
            WRITERS,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "task-stream-writer-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    writers.allowCoreThreadTimeOut(true);
    // One sweep for all streams, not a timer each: an idle stream costs a check per tick.
    timer.scheduleWithFixedDelay(
        () -> {
          for (TaskStream s : open.values()) {
            try {
              s.tick();
            } catch (RuntimeException e) {
              log.warn("task stream {} keep-alive failed: {}", s.id, e.toString());
            }
          }
        },
        TaskStream.QUIET_TICK_NANOS,
        TaskStream.QUIET_TICK_NANOS,
        TimeUnit.NANOSECONDS);
  }

  /**
   * Starts writing {@code s} to {@code out} (see {@link TaskStream#start}); the future completes
   * when it has ended, and the stream is forgotten then.
   */
  public CompletableFuture<Void> start(TaskStream s, OutputStream out) {
    return s.start(out, writers, timer).whenComplete((v, e) -> closed(s));
  }

  /** Opens a stream; null when this server already has its most open. */
  public TaskStream open(
      String name,
      List<Integer> versions,
      int slots,
      int leaseSeconds,
      int seconds,
      Integer journalMax,
      WorkerIdentity who,
      boolean sticky) {
    if (open.size() >= maxOpen) {
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
            journalMax,
            who,
            sticky,
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

  /** The most streams open at once. */
  public int maxOpen() {
    return maxOpen;
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
