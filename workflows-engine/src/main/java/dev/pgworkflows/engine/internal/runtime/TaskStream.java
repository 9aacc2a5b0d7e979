package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.TaskStore;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.StreamOpened;
import dev.pgworkflows.protocol.Task;
import dev.pgworkflows.protocol.Tasks;
import java.io.IOException;
import java.io.OutputStream;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker's task stream: a response that stays open and carries the workflow's tasks as they
 * become due, for as many as the worker has free slots, and a blank line each second it has nothing
 * to carry. Behind it the stream takes turns at the queue, as a poll does (receive, or wait for a
 * wake-up or for a start to hand it runs), but a turn that delivers is followed by the next at
 * once, on the server, so the stream is almost always waiting and a start can hand it its run. A
 * turn that follows a claim skips its receive when no wake-up went unanswered meanwhile.
 *
 * <p>The stream takes nothing before the worker's first slot report, which the worker sends once it
 * has read the stream's id: so an answer held back on the way (a proxy that buffers) never holds
 * tasks, which the server could not know to hand back. Credit: the worker reports, with its writes,
 * how many tasks of the stream it has seen and how many slots it has free; the stream may have
 * {@code free - (sent - seen)} tasks out. Reports are numbered, and only a newer one counts, so
 * reports that overtake each other do no harm. A report that raises the credit from nothing begins
 * a turn. A nearly full worker's stream (room for fewer than {@value #LOT} tasks, or a quarter of
 * its slots) waits up to {@value #LOT_WAIT_MS} ms for room for that many before its next turn, so
 * that a saturated worker takes its tasks in lots, as its long polls would, and not one for each
 * slot that frees.
 *
 * <p>Tasks the stream could not write (the worker went away, or the stream ended as they came) are
 * handed back at once.
 */
public final class TaskStream {
  private static final Logger log = LoggerFactory.getLogger(TaskStream.class);

  /** The most tasks one turn takes, as for a poll. */
  static final int MAX_TAKE = 100;

  /**
   * A worker with fewer free slots than this (or than a quarter of its slots, if less) is nearly
   * full: its stream waits for room for this many tasks before its next turn ...
   */
  static final int LOT = 8;

  /** ... or this long, whichever comes first. */
  static final long LOT_WAIT_MS = 2;

  /**
   * A stream with nothing to send for this long writes a blank line, so a worker can tell a quiet
   * stream from one held back on the way (a buffering proxy) or broken.
   */
  static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** How often each open stream is asked whether it has been quiet that long. */
  static final long QUIET_TICK_NANOS = KEEP_ALIVE_NANOS / 4;

  /** Put in the outbox to end the stream before its time. */
  private static final List<Task> END = new ArrayList<>();

  /** What a waiting turn of this stream takes, for a start that would hand it runs. */
  record Claim(TaskStream stream, PollTerms terms) {}

  final String id;
  private final String name;
  private final String queue;
  private final List<Integer> versions;
  private final int leaseSeconds;
  private final Integer journalMax;

  /** What the stream's turns take, but for how many. */
  private final PollTerms terms;

  private final long deadlineNanos;
  private final int lot;
  private final TaskStore store;
  private final LongPoll longPoll;
  private final Timers timers;
  private final InstantSource clock;
  private final ConcurrentLinkedQueue<List<Task>> outbox = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean draining = new AtomicBoolean();
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  // Set by start: out first, writers once the stream's id is written.
  private volatile OutputStream out;
  private volatile Executor writers;
  private volatile ScheduledFuture<?> deadline;
  private volatile long lastWriteNanos;

  // Guarded by this.
  private long sent;
  private long report;
  private long seen;
  // Nothing before the first report.
  private long free;
  private boolean turning;
  private boolean closed;
  // The next turn waits for room for a lot (or for LOT_WAIT_MS).
  private boolean deferred;
  private boolean finished;

  /** A stream for a worker of {@code slots} slots in all, which sizes its lot. */
  TaskStream(
      String id,
      String name,
      List<Integer> versions,
      int slots,
      int leaseSeconds,
      int seconds,
      Integer journalMax,
      WorkerIdentity who,
      boolean sticky,
      TaskStore store,
      LongPoll longPoll,
      Timers timers,
      InstantSource clock) {
    this.id = id;
    this.name = name;
    this.queue = Names.workflowQueue(name);
    this.versions = List.copyOf(versions);
    this.leaseSeconds = leaseSeconds;
    this.journalMax = journalMax;
    this.terms = new PollTerms(this.versions, 1, leaseSeconds, journalMax).of(who, sticky);
    this.deadlineNanos = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    this.lot = Math.max(1, Math.min(LOT, slots / 4));
    this.store = store;
    this.longPoll = longPoll;
    this.timers = timers;
    this.clock = clock;
  }

  /** The workflow whose tasks it carries. */
  String name() {
    return name;
  }

  /** Whether the stream still takes tasks. */
  synchronized boolean open() {
    return !closed;
  }

  /**
   * The worker's report: {@code seen} tasks of this stream read, {@code free} slots free. Only a
   * report numbered above the last one counts.
   */
  void report(long number, long seen, long free) {
    synchronized (this) {
      if (number <= report || closed) {
        return;
      }
      report = number;
      this.seen = Math.min(seen, sent);
      this.free = free;
      if (deferred) {
        if (credit() < lot) {
          return;
        }
        deferred = false;
      } else if (turning || credit() == 0) {
        return;
      }
      turning = true;
    }
    turns(-1, true);
  }

  /** The deferred turn's time is up: it takes what it has room for. */
  private void resume() {
    synchronized (this) {
      if (!deferred) {
        return;
      }
      deferred = false;
    }
    turns(-1, false);
  }

  /** Tasks the stream may still send; called holding the lock. */
  private int credit() {
    return (int) Math.max(0, Math.min(MAX_TAKE, free - (sent - seen)));
  }

  /** Takes turns while there is credit; a turn that must wait goes on in its callback. */
  private void turns(long quietMark, boolean mayDefer) {
    while (true) {
      int max;
      long remaining;
      synchronized (this) {
        max = credit();
        remaining = deadlineNanos - System.nanoTime();
        if (closed || max == 0 || remaining <= 0) {
          turning = false;
          return;
        }
        if (mayDefer && max < lot) {
          deferred = true;
          longPoll.later(this::resume, LOT_WAIT_MS);
          return;
        }
      }
      mayDefer = true;
      CompletableFuture<LongPoll.Turn<Task>> turn =
          longPoll.turn(
              queue,
              terms.waitKey(),
              new Claim(this, terms.withMax(max)),
              TimeUnit.NANOSECONDS.toMillis(remaining),
              max,
              () -> open() ? terms.withMax(max).receive(store, name) : List.of(),
              quietMark,
              this::open);
      if (!turn.isDone()) {
        turn.whenComplete(this::afterTurn);
        return;
      }
      LongPoll.Turn<Task> t;
      try {
        t = turn.join();
      } catch (CompletionException e) {
        afterTurn(null, e);
        return;
      }
      deliver(t.tasks());
      quietMark = t.quietMark();
    }
  }

  private void afterTurn(LongPoll.Turn<Task> t, Throwable error) {
    if (error != null) {
      // The receive failed (the database is away): try again shortly.
      log.debug("task stream {} of {} could not receive: {}", id, name, error.toString());
      longPoll.later(() -> turns(-1, true), 1000);
      return;
    }
    deliver(t.tasks());
    turns(t.quietMark(), true);
  }

  private void deliver(List<Task> tasks) {
    if (tasks.isEmpty()) {
      return;
    }
    boolean back;
    synchronized (this) {
      back = closed;
      if (!back) {
        sent += tasks.size();
        outbox.add(tasks);
      }
    }
    if (back) {
      handBack(tasks);
    } else {
      kick();
    }
  }

  /**
   * Starts writing the stream to {@code out}: its id at once, on the caller's thread, then each
   * delivery as it comes and a blank line each second it has nothing to carry, on {@code writers}
   * (shared by all streams, so an open stream holds no thread), until its time is up, it is ended,
   * or the worker goes away. The future completes when the stream has ended and handed back what it
   * could not write.
   */
  public CompletableFuture<Void> start(
      OutputStream out, Executor writers, ScheduledExecutorService timer) {
    this.out = out;
    try {
      write(out, new StreamOpened(id));
      lastWriteNanos = System.nanoTime();
      // Only now may a writer run (the keep-alive sweep looks for one): the id is the first line.
      this.writers = writers;
    } catch (IOException e) {
      log.debug("task stream {} of {} broke: {}", id, name, e.toString());
      finish();
      return done;
    }
    deadline = timer.schedule(this::end, deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
    kick();
    return done;
  }

  /**
   * A writer's turn when the stream has been quiet for {@link #KEEP_ALIVE_NANOS}: called by {@link
   * TaskStreams} for every open stream each {@link #QUIET_TICK_NANOS}.
   */
  void tick() {
    if (writers != null && System.nanoTime() - lastWriteNanos >= KEEP_ALIVE_NANOS) {
      kick();
    }
  }

  /** Has a writer drain the outbox, unless one is at it (or the stream has finished). */
  private void kick() {
    if (writers != null && draining.compareAndSet(false, true)) {
      try {
        writers.execute(this::drain);
      } catch (RejectedExecutionException e) {
        draining.set(false);
        finish();
      }
    }
  }

  /** Writes what the outbox holds, and a blank line when the stream was quiet for a while. */
  private void drain() {
    try {
      while (true) {
        List<Task> tasks = outbox.poll();
        if (tasks == null) {
          if (System.nanoTime() - lastWriteNanos >= KEEP_ALIVE_NANOS) {
            // Quiet for a while: a blank line shows the worker the stream is alive, and finds a
            // worker that went away while its stream was quiet.
            out.write('\n');
            out.flush();
            lastWriteNanos = System.nanoTime();
          }
          draining.set(false);
          // A delivery that came after the poll above and found this writer still at it.
          if (outbox.isEmpty() || !draining.compareAndSet(false, true)) {
            return;
          }
          continue;
        }
        if (tasks == END) {
          finish(); // draining stays set: no writer runs again
          return;
        }
        try {
          write(out, new Tasks(tasks));
          lastWriteNanos = System.nanoTime();
        } catch (IOException e) {
          handBack(tasks);
          throw e;
        }
      }
    } catch (IOException | RuntimeException e) {
      log.debug("task stream {} of {} broke: {}", id, name, e.toString());
      finish();
    }
  }

  /** Ends the stream for good: takes no more tasks, hands back what it holds, and completes. */
  private void finish() {
    close();
    synchronized (this) {
      if (finished) {
        return;
      }
      finished = true;
    }
    ScheduledFuture<?> d = deadline;
    if (d != null) {
      d.cancel(false);
    }
    List<Task> left = new ArrayList<>();
    for (List<Task> tasks; (tasks = outbox.poll()) != null; ) {
      if (tasks != END) {
        left.addAll(tasks);
      }
    }
    handBack(left);
    done.complete(null);
  }

  private static void write(OutputStream out, Object line) throws IOException {
    out.write(Json.MAPPER.writeValueAsBytes(line));
    out.write('\n');
    out.flush();
  }

  /** Ends the stream: it writes what it holds and closes; what comes later is handed back. */
  public void end() {
    close();
    outbox.add(END);
    kick();
  }

  /** Stops taking tasks; a turn that waits stops waiting. */
  private void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    longPoll.dismiss(queue, terms -> terms instanceof Claim c && c.stream() == this);
  }

  /** Hands tasks back to be due at once, for some poll or stream to take. */
  private void handBack(List<Task> tasks) {
    if (tasks.isEmpty()) {
      return;
    }
    for (Task t : tasks) {
      try {
        // Not an attempt: no worker saw it.
        store.retry(t.runId(), t.messageId(), Long.parseLong(t.receipt()), 0, false);
      } catch (RuntimeException e) {
        // Its lease runs out and it comes back then.
        log.debug("could not hand back run {}: {}", t.runId(), e.toString());
      }
    }
    timers.wakeAt(queue, clock.instant());
  }
}
