package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.DatabaseException;
import dev.pgworkflows.engine.internal.store.NewRun;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.Rejected;
import dev.pgworkflows.protocol.StartAnswer;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.StartTiming;
import dev.pgworkflows.protocol.UpdateResult;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;

/**
 * Starting runs: handed to a waiting poll of this server when there is one ({@link HandedStarts}),
 * else through the start functions; a batch in one transaction, and should the database refuse that
 * as a whole, each start again in its own, so one bad item costs only itself.
 */
public final class Starts {
  /** How far ahead a delayed start arms a timer of its own. */
  private static final Duration TIMER_HORIZON = Duration.ofMinutes(10);

  private final RunStore store;
  private final HandedStarts handed;
  private final WorkflowEvents events;
  private final Timers timers;
  private final InstantSource clock;

  public Starts(
      RunStore store,
      HandedStarts handed,
      WorkflowEvents events,
      Timers timers,
      InstantSource clock) {
    this.store = store;
    this.handed = handed;
    this.events = events;
    this.timers = timers;
    this.clock = clock;
  }

  /** One start: the run, and whether this call created it. */
  public StartResult start(String name, NewRun run) {
    List<StartResult> given = handed.start(name, List.of(run));
    StartResult s = given != null ? given.get(0) : store.start(name, run);
    return started(name, run, s);
  }

  /**
   * A start and an update of its run in one transaction ({@code workflow_update_with_start}),
   * counted and timed as a start is.
   */
  public UpdateResult startWithUpdate(
      String name, NewRun run, String update, String input, String key) {
    RunStore.UpdatedStart u = store.startWithUpdate(name, run, update, input, key);
    started(name, run, new StartResult(u.update().runId(), "running", u.runCreated()));
    return u.update();
  }

  /** Many starts of one workflow: per item, in order, the run or a rejection. */
  public List<StartAnswer> startMany(String name, List<NewRun> runs) {
    List<StartAnswer> out = startAll(name, runs);
    for (int i = 0; i < out.size(); i++) {
      if (out.get(i) instanceof StartResult s) {
        out.set(i, started(name, runs.get(i), s));
      }
    }
    return out;
  }

  /**
   * Counts a new run and, when its first task is due later, wakes this server's waiting workers
   * then; marks a start folded into a pending debounced run.
   */
  private StartResult started(String name, NewRun run, StartResult s) {
    if (s.created()) {
      events.started(name);
    }
    StartTiming t = run.timing();
    if (t.debounceKey() != null) {
      // A folded start pushed the run's due time to the end of its window, or to the cap ten
      // windows after the run began, which may come sooner: the run's own due time says which.
      Instant due =
          s.created()
              ? clock.instant().plusMillis(t.debounceMs())
              : store.dueAt(s.runId()).orElse(null);
      if (due != null && due.isBefore(clock.instant().plus(TIMER_HORIZON))) {
        timers.wakeAt(Names.workflowQueue(name), due);
      }
      return s.debounced(!s.created());
    }
    if (s.created() && (t.startAt() != null || t.delayMs() != null)) {
      Instant now = clock.instant();
      Instant due = t.startAt() != null ? t.startAt() : now.plusMillis(t.delayMs());
      // Runs due further ahead hold no timer each: a poll that begins to wait with no timer set
      // looks up the queue's next due time itself, and the fallback wake-up bounds the rest.
      if (due.isAfter(now) && due.isBefore(now.plus(TIMER_HORIZON))) {
        timers.wakeAt(Names.workflowQueue(name), due);
      }
    }
    return s;
  }

  private List<StartAnswer> startAll(String name, List<NewRun> items) {
    try {
      List<StartResult> given = handed.start(name, items);
      if (given != null) {
        return new ArrayList<>(given);
      }
    } catch (DatabaseException e) {
      if (e.status() >= 500) {
        throw e;
      }
    }
    if (items.size() > 1) {
      try {
        return new ArrayList<>(store.startBatch(name, items));
      } catch (DatabaseException e) {
        if (e.status() >= 500) {
          throw e;
        }
      }
    }
    List<StartAnswer> out = new ArrayList<>(items.size());
    for (NewRun r : items) {
      try {
        out.add(store.start(name, r));
      } catch (DatabaseException e) {
        int status = e.status();
        if (status >= 500) {
          throw e;
        }
        out.add(Rejected.of(status, e.serverMessage()));
      }
    }
    return out;
  }
}
