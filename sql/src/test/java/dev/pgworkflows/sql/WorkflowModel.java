package dev.pgworkflows.sql;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * The runs of one workflow as the README promises them, in plain collections: a start is idempotent
 * by key; a run has at most one task, due, leased to a worker or (waiting for a signal with no
 * timeout) none; a completion, a retry or a signal acts only through the lease the run's task has
 * now (an older receipt is stale and changes nothing); each step is journaled once, and a
 * completion of a step journaled already changes nothing (the run keeps its task, its lease and its
 * receipt, and goes on from its journal); a signal is delivered when it fits the run's wait and
 * buffered otherwise, the first later wait for its event taking it; a cancel ends a running run;
 * the sweep deletes ended runs past their retention. Receipts and message ids are the database's;
 * the model remembers what it was told.
 */
final class WorkflowModel {
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
    final String key;
    Status status = Status.running;
    final List<Step> journal = new ArrayList<>();
    final List<Signal> inbox = new ArrayList<>();

    /** Whether the run has a task (a message): false once ended, or waiting with no timeout. */
    boolean hasTask = true;

    /** The task's message id, once a poll showed it; null for a task no poll has seen. */
    Long msg;

    /** When the task became due, in actions; a leased task is not due. */
    long dueSince;

    boolean leased;

    /** The receipt that holds the task's lease now, if any. */
    Long receipt;

    /** How often the task was handed out since the last journaled step. */
    int attempts;

    String reason = "start";

    /** The event the run waits for, and the wait's step, or null. */
    String waitEvent;

    String waitStep;

    Run(long id, String key, long now) {
      this.id = id;
      this.key = key;
      this.dueSince = now;
    }

    boolean due() {
      return status == Status.running && hasTask && !leased;
    }

    String nextStepName() {
      return "s" + journal.size();
    }

    void newTask(String reason, long now) {
      hasTask = true;
      msg = null;
      leased = false;
      receipt = null;
      attempts = 0;
      dueSince = now;
      this.reason = reason;
    }

    void end(Status s) {
      status = s;
      hasTask = false;
      msg = null;
      leased = false;
      receipt = null;
      waitEvent = null;
      waitStep = null;
    }
  }

  /** A task as a worker got it: what it completes, retries or holds with. */
  record Held(long run, long msg, long receipt) {}

  final TreeMap<Long, Run> runs = new TreeMap<>();

  /** Every task handed out, for completions with current and stale receipts. */
  final List<Held> held = new ArrayList<>();

  /** Actions so far: the order in which tasks became due. */
  long now;

  Run byKey(String key) {
    return key == null
        ? null
        : runs.values().stream().filter(r -> key.equals(r.key)).findFirst().orElse(null);
  }

  Run started(long id, String key) {
    Run r = new Run(id, key, now);
    runs.put(id, r);
    return r;
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

  /** Whether {@code r} journaled a step named {@code name}. */
  boolean journaled(Run r, String name) {
    return r.journal.stream().anyMatch(s -> s.name().equals(name));
  }

  /** A poll handed {@code r}'s task out: counted, leased (or, with lease 0, due again at once). */
  void handedOut(Run r, long msg, long receipt, boolean lease) {
    r.msg = msg;
    r.attempts++;
    r.receipt = receipt;
    r.leased = lease;
    r.dueSince = now;
    held.add(new Held(r.id, msg, receipt));
  }

  /** A step journaled by the holder of the lease: its attempt is how often the task went out. */
  void journal(Run r) {
    r.journal.add(new Step(r.nextStepName(), Math.max(r.attempts, 1)));
  }

  /** The run begins to wait for {@code event}; a buffered signal for it ends the wait at once. */
  void beginWait(Run r, String event) {
    r.hasTask = false;
    r.msg = null;
    r.leased = false;
    r.receipt = null;
    r.waitEvent = event;
    r.waitStep = "w" + r.journal.size();
    for (Signal s : r.inbox) {
      if (!s.delivered && s.event.equals(event)) {
        deliver(r, s);
        return;
      }
    }
  }

  /** Delivers a signal to the run's wait: the wait step is journaled and the run is due. */
  void deliver(Run r, Signal s) {
    s.delivered = true;
    r.journal.add(new Step(r.waitStep, 1));
    r.waitEvent = null;
    r.waitStep = null;
    r.newTask("signal", now);
  }

  /** Ended runs past their retention go, journals and inboxes with them. */
  int sweep() {
    Set<Long> gone = new HashSet<>();
    runs.values().stream().filter(r -> r.status != Status.running).forEach(r -> gone.add(r.id));
    gone.forEach(runs::remove);
    return gone.size();
  }
}
