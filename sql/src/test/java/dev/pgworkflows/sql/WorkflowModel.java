package dev.pgworkflows.sql;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The runs of one workflow as the docs promise them, in plain collections: a start is idempotent by
 * key; a run has at most one task, due at a time, leased to a worker until its lease runs out,
 * parked, or (waiting for a signal with no timeout) none; a completion, a retry or a continuation
 * acts only through the lease the run's task has now (an older receipt is stale and changes
 * nothing); each step is journaled once, and a completion of a step journaled already changes
 * nothing; a signal is delivered when it fits the run's wait and buffered otherwise, the first
 * later wait for its event taking it; a wait's timeout journals the wait when its task is handed
 * out; a child's end is an event in its parent's inbox; a cancel ends a running run and, first, its
 * running children; a paused run's task is parked until the resume; a run of a key with its one
 * slot taken is parked until the slot frees, the oldest parked run of the key woken first; a run
 * that continues as new ends and its successor takes its key, its parent and its buffered signals;
 * the sweep deletes ended runs past their retention, a child after its parent, a chain's first run
 * with its last.
 *
 * <p>Time is the test's: the database's clock plus {@link #clock} seconds, which only the poll is
 * told of. A task's visibility is kept as that offset ({@link Run#offset}): 0 for a task due when
 * it was made, the clock plus the lease for a task handed out, the delay asked for a sleep or a
 * wait's timeout. Receipts and message ids are the database's; the model remembers what it was
 * told.
 */
final class WorkflowModel {
  /** How many runs of one key may hold a slot at once (the workflow's concurrency limit). */
  static final int LIMIT = 1;

  /** An offset no clock reaches: a parked task. */
  static final double PARKED = Double.MAX_VALUE;

  enum Status {
    running,
    completed,
    failed,
    cancelled
  }

  record Step(String name, int attempts) {}

  static final class Signal {
    final String event;
    final String key;
    boolean delivered;

    Signal(String event, String key) {
      this.event = event;
      this.key = key;
    }

    @Override
    public String toString() {
      return event + (delivered ? " delivered" : " buffered");
    }
  }

  static final class Run {
    final long id;
    String key;
    final String concurrencyKey;
    Status status = Status.running;
    final List<Step> journal = new ArrayList<>();
    final List<Signal> inbox = new ArrayList<>();

    /** Whether the run has a task (a message): false once ended, or waiting with no timeout. */
    boolean hasTask = true;

    /** The task's message id, once a poll showed it; null for a task no poll has seen. */
    Long msg;

    /** The order in which tasks were made: the order of their message ids. */
    long born;

    /** The clock at which the task is due (its visibility time less the database's clock). */
    double offset;

    /**
     * When the task's visibility was last set: the test's wall clock, the action, the order in it.
     */
    double setReal;

    long setAt;

    long setOrder;

    /** The receipt that holds the task's lease now, if any. */
    Long receipt;

    /** How often the task was handed out since the last journaled step. */
    int attempts;

    String reason = "start";

    /** The event the run waits for, and the wait's step, or null. */
    String waitEvent;

    String waitStep;

    boolean paused;

    /** Holds one of its key's slots; parked in its key's line; woken from it for a freed slot. */
    boolean slot;

    boolean waiting;

    boolean woken;

    Long parent;
    Long chainFirst;
    Long continuedTo;

    /** The children this run started, by the parent step that started them. */
    final TreeMap<String, Long> children = new TreeMap<>();

    Run(long id, String key, String concurrencyKey) {
      this.id = id;
      this.key = key;
      this.concurrencyKey = concurrencyKey;
    }

    boolean parked() {
      return hasTask && offset == PARKED;
    }

    String nextStepName() {
      return "s" + journal.size();
    }

    /** The id the run's parent and callers know its chain by. */
    long known() {
      return chainFirst == null ? id : chainFirst;
    }
  }

  /** A task as a worker got it: what it completes, retries or holds with. */
  record Held(long run, long msg, long receipt) {}

  final TreeMap<Long, Run> runs = new TreeMap<>();

  /** Every task handed out, for completions with current and stale receipts. */
  final List<Held> held = new ArrayList<>();

  /** Actions so far. */
  long now;

  /** The wall clock (seconds) when the action began: visibility times of tasks are set from it. */
  double real;

  /** The test's time: seconds past the database's clock. */
  long clock = 100;

  private long born;
  private long order;

  Run byKey(String key) {
    return key == null
        ? null
        : runs.values().stream().filter(r -> key.equals(r.key)).findFirst().orElse(null);
  }

  Run started(long id, String key, String concurrencyKey, double offset) {
    Run r = new Run(id, key, concurrencyKey);
    runs.put(id, r);
    newTask(r, "start", offset);
    return r;
  }

  /** Whether {@code r}'s task is due now. */
  boolean due(Run r) {
    return r.status == Status.running && r.hasTask && r.offset <= clock;
  }

  /**
   * Due tasks in the order a receive takes them: by visibility time (the wall clock when it was set
   * plus the offset), then message id.
   */
  Comparator<Run> dueOrder() {
    return Comparator.<Run>comparingDouble(r -> r.setReal + r.offset)
        .thenComparingLong(r -> r.setAt)
        .thenComparingLong(r -> r.setOrder);
  }

  /** Whether {@code h} still holds its run's lease. */
  boolean holds(Run r, Held h) {
    return r.status == Status.running
        && r.hasTask
        && r.msg != null
        && r.msg == h.msg()
        && r.receipt != null
        && r.receipt == h.receipt();
  }

  boolean journaled(Run r, String name) {
    return r.journal.stream().anyMatch(s -> s.name().equals(name));
  }

  /** A new message for the run, due at {@code offset}. */
  void newTask(Run r, String reason, double offset) {
    r.hasTask = true;
    r.msg = null;
    r.born = ++born;
    r.receipt = null;
    r.attempts = 0;
    r.reason = reason;
    visibleAt(r, offset);
  }

  /** The run's task becomes due at {@code offset}, set by this action after what it set before. */
  void visibleAt(Run r, double offset) {
    r.offset = offset;
    r.setReal = real;
    r.setAt = now;
    r.setOrder = ++order;
  }

  /**
   * A poll received {@code r}'s task: counted and leased from the poll's time (undone when the task
   * is parked or left due instead of handed out).
   */
  void received(Run r, int lease) {
    r.attempts++;
    r.receipt = null;
    // Every task a poll receives gets the same visibility time: message id decides among them.
    r.offset = clock + lease;
    r.setReal = real;
    r.setAt = now;
    r.setOrder = -1_000_000_000L + r.born;
  }

  /** The task a poll received was handed out with this message and receipt. */
  void handedOut(Run r, long msg, long receipt) {
    r.msg = msg;
    r.receipt = receipt;
    held.add(new Held(r.id, msg, receipt));
  }

  /** A step journaled by the holder of the lease: its attempt is how often the task went out. */
  void journal(Run r) {
    r.journal.add(new Step(r.nextStepName(), Math.max(r.attempts, 1)));
  }

  /**
   * The run begins to wait for {@code event}, with its timeout's task due at {@code timeout} or no
   * task; a buffered signal for it ends the wait at once.
   */
  void beginWait(Run r, String event, Double timeout) {
    if (timeout == null) {
      dropTask(r);
    } else {
      newTask(r, "timeout", timeout);
    }
    releaseSlot(r);
    r.waitEvent = event;
    r.waitStep = "w" + r.journal.size();
    for (Signal s : r.inbox) {
      if (!s.delivered && s.event.equals(event)) {
        deliver(r, s);
        return;
      }
    }
  }

  void dropTask(Run r) {
    r.hasTask = false;
    r.msg = null;
    r.receipt = null;
  }

  /** Delivers a signal to the run's wait: the wait step is journaled and the run is due. */
  void deliver(Run r, Signal s) {
    s.delivered = true;
    r.journal.add(new Step(r.waitStep, 1));
    r.waitEvent = null;
    r.waitStep = null;
    newTask(r, "signal", 0);
  }

  /** An event into a running run's inbox: delivered when it fits the wait. */
  String send(Run r, String event, String key) {
    Signal s = new Signal(event, key);
    r.inbox.add(s);
    if (event.equals(r.waitEvent)) {
      deliver(r, s);
      return "delivered";
    }
    return "buffered";
  }

  /** The last run of the chain a run that continued as new belongs to, or the run itself. */
  Run last(Run r) {
    if (r.continuedTo == null) {
      return r;
    }
    return runs.values().stream()
        .filter(c -> r.chainFirst.equals(c.chainFirst))
        .reduce((a, b) -> b)
        .orElse(r);
  }

  /** A running run ends: its task goes, its slot and its place in line free, its parent is told. */
  void end(Run r, Status s) {
    r.status = s;
    dropTask(r);
    r.waitEvent = null;
    r.waitStep = null;
    r.paused = false;
    releaseSlot(r);
    if (r.waiting) {
      r.waiting = false;
      if (r.woken) {
        r.woken = false;
        wake(r.concurrencyKey);
      }
    }
    if (r.parent != null && r.continuedTo == null) {
      Run p = runs.get(r.parent);
      if (p != null && p.status == Status.running) {
        send(p, "__child." + r.known(), null);
      }
    }
  }

  /** Cancels a run's running children, oldest first, then the run (or its chain's last run). */
  boolean cancel(Run r) {
    for (Run c : new ArrayList<>(runs.values())) {
      if (c.parent != null && c.parent == r.id && c.status == Status.running) {
        cancel(c);
      }
    }
    if (r.status != Status.running && r.continuedTo != null) {
      Run l = last(r);
      if (l != r) {
        return cancel(l);
      }
    }
    if (r.status != Status.running) {
      return false;
    }
    end(r, Status.cancelled);
    return true;
  }

  /** A slot holder's task changed or the run ended: the oldest parked run of the key is woken. */
  void releaseSlot(Run r) {
    if (r.slot) {
      r.slot = false;
      wake(r.concurrencyKey);
    }
  }

  /** Wakes the oldest parked run of the key: its task due now, a slot kept for it. */
  void wake(String key) {
    for (Run w : runs.values()) {
      if (w.waiting && !w.woken && key.equals(w.concurrencyKey)) {
        if (w.parked()) {
          visibleAt(w, 0);
        }
        w.woken = true;
        return;
      }
    }
  }

  /** How many runs of the key hold a slot. */
  long active(String key) {
    return runs.values().stream().filter(w -> w.slot && key.equals(w.concurrencyKey)).count();
  }

  /**
   * Whether a keyed run's task just received may go out (flow_admit): it holds a slot, or takes one
   * that is free and kept for no woken run, when no older run of the key waits; otherwise it is
   * parked in its key's line (looked at again at once when slots are free but kept for others).
   */
  boolean admit(Run r) {
    if (r.slot) {
      return true;
    }
    String key = r.concurrencyKey;
    long active = active(key);
    boolean mine = r.waiting && r.woken;
    boolean older = false;
    long kept = 0;
    if (!mine) {
      kept =
          runs.values().stream()
              .filter(w -> w.waiting && w.woken && key.equals(w.concurrencyKey))
              .count();
      older =
          runs.values().stream()
              .anyMatch(w -> w.waiting && !w.woken && w.id < r.id && key.equals(w.concurrencyKey));
      if (active + kept < LIMIT && older) {
        wake(key);
        mine = r.waiting && r.woken;
      }
    }
    if (active < LIMIT && (mine || (active + kept < LIMIT && !older))) {
      r.slot = true;
      r.waiting = false;
      r.woken = false;
      return true;
    }
    if (active < LIMIT) {
      for (Run w : runs.values()) {
        if (w.waiting && w.woken && key.equals(w.concurrencyKey) && w.parked()) {
          visibleAt(w, 0);
        }
      }
    }
    boolean wasWoken = r.waiting && r.woken;
    // Kept slots or an older run in line: a look again in 250 ms, which any clock here has passed.
    visibleAt(r, active >= LIMIT && !wasWoken ? PARKED : 0.25);
    r.waiting = true;
    r.woken = false;
    return false;
  }

  /** A paused run's task, just received: parked; a keyed run gives up its slot or its place. */
  void parkPaused(Run r) {
    visibleAt(r, PARKED);
    if (r.concurrencyKey == null) {
      return;
    }
    releaseSlot(r);
    if (r.waiting) {
      boolean wasWoken = r.woken;
      r.waiting = false;
      r.woken = false;
      if (wasWoken) {
        wake(r.concurrencyKey);
      }
    }
  }

  /**
   * Ended runs past their retention go, journals and inboxes with them: a child only once its
   * parent is gone, a chain's first run only with the chain's last.
   */
  int sweep() {
    Set<Long> gone = new TreeSet<>();
    for (Run r : runs.values()) {
      boolean first = r.chainFirst != null && r.chainFirst == r.id;
      if (r.status == Status.running || first) {
        continue;
      }
      if (r.parent != null && runs.containsKey(r.parent)) {
        continue;
      }
      gone.add(r.id);
      if (r.chainFirst != null && r.continuedTo == null) {
        gone.add(r.chainFirst);
      }
    }
    gone.forEach(runs::remove);
    return gone.size();
  }
}
