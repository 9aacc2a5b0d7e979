package dev.pgworkflows.server.internal.engine;

import dev.pgworkflows.protocol.Rejected;
import dev.pgworkflows.protocol.StartAnswer;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.server.internal.store.DatabaseException;
import dev.pgworkflows.server.internal.store.NewRun;
import dev.pgworkflows.server.internal.store.RunStore;
import java.util.ArrayList;
import java.util.List;

/**
 * Starting runs: handed to a waiting poll of this server when there is one ({@link HandedStarts}),
 * else through the start functions; a batch in one transaction, and should the database refuse that
 * as a whole, each start again in its own, so one bad item costs only itself.
 */
public final class Starts {
  private final RunStore store;
  private final HandedStarts handed;
  private final WorkflowEvents events;

  public Starts(RunStore store, HandedStarts handed, WorkflowEvents events) {
    this.store = store;
    this.handed = handed;
    this.events = events;
  }

  /** One start: the run, and whether this call created it. */
  public StartResult start(String name, NewRun run) {
    List<StartResult> given = handed.start(name, List.of(run));
    StartResult s = given != null ? given.get(0) : store.start(name, run);
    if (s.created()) {
      events.started(name);
    }
    return s;
  }

  /** Many starts of one workflow: per item, in order, the run or a rejection. */
  public List<StartAnswer> startMany(String name, List<NewRun> runs) {
    List<StartAnswer> out = startAll(name, runs);
    for (StartAnswer a : out) {
      if (a instanceof StartResult s && s.created()) {
        events.started(name);
      }
    }
    return out;
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
