package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.CompletionResult;
import dev.pgworkflows.engine.internal.store.DatabaseException;
import dev.pgworkflows.engine.internal.store.RunEnd;
import dev.pgworkflows.engine.internal.store.StepCompletion;
import dev.pgworkflows.engine.internal.store.TaskStore;
import dev.pgworkflows.engine.internal.telemetry.RunSpans;
import dev.pgworkflows.protocol.CompletionOutcome;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.Next;
import dev.pgworkflows.protocol.Task;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a step's completion does: journal it and continue or end the run, in the database; then arm
 * a timer for a continuation due soon, record the step metric, and, for a run it ended, the run's
 * metrics and span. A batch goes through in one transaction when it can and item by item when the
 * database refuses it as a whole; it may take tasks for the slots it freed.
 */
public final class Completions {
  private static final Logger log = LoggerFactory.getLogger(Completions.class);

  /** A continuation due within this long gets a timer on this server (no NOTIFY is sent). */
  private static final long TIMER_HORIZON_MS = 60_000;

  private final TaskStore store;
  private final Timers timers;
  private final WorkflowEvents events;
  private final RunEnds runEnds;
  private final RunSpans spans;
  private final VersionRegistry versions;
  private final InstantSource clock;
  private final LongConsumer stateChanged;

  /** {@code stateChanged} hears of a run whose journaled step changed its state. */
  public Completions(
      TaskStore store,
      Timers timers,
      WorkflowEvents events,
      RunEnds runEnds,
      RunSpans spans,
      VersionRegistry versions,
      InstantSource clock,
      LongConsumer stateChanged) {
    this.store = store;
    this.timers = timers;
    this.events = events;
    this.runEnds = runEnds;
    this.spans = spans;
    this.versions = versions;
    this.clock = clock;
    this.stateChanged = stateChanged;
  }

  /** One completion in its own transaction. */
  public CompletionOutcome complete(String name, StepCompletion c) {
    CompletionResult r = completeOne(c);
    followUp(name, c, r);
    return r.outcome();
  }

  /**
   * Many completions of one workflow: answered in order, each with its outcome or a refusal of its
   * own. {@code traceparents} are the items' step spans (null entries for untraced items), {@code
   * received} when the request came.
   */
  public List<CompletionOutcome> completeBatch(
      String name, List<StepCompletion> items, List<String> traceparents, Instant received) {
    List<CompletionResult> results = completeAll(name, items);
    List<CompletionOutcome> out = new ArrayList<>(results.size());
    for (int k = 0; k < items.size(); k++) {
      CompletionResult r = results.get(k);
      StepCompletion c = items.get(k);
      if (!r.rejected()) {
        spans.completed(
            traceparents.get(k),
            received,
            name,
            c.runId(),
            c.step() == null ? null : c.step().name(),
            r.outcome().outcome());
        followUp(name, c, r);
      }
      out.add(r.outcome());
    }
    return out;
  }

  /**
   * The tasks a batch takes, after its completions committed. A failure here leaves the batch's
   * answers standing: the worker learns of no task, and the poll thread finds any there are.
   */
  public List<Task> take(String name, PollTerms take) {
    try {
      versions.register(name, take.versions());
      return take.receive(store, name);
    } catch (DatabaseException e) {
      if (e.status() >= 500) {
        log.warn("taking tasks of {} after a batch failed: {}", name, e.getMessage());
      }
      return List.of();
    }
  }

  /** One completion; for one that ends its run, with what the run's span and metrics need. */
  private CompletionResult completeOne(StepCompletion c) {
    if (c.result() != null) {
      return store.completeEnded(c);
    }
    return CompletionResult.of(store.complete(c));
  }

  /**
   * The batch in one transaction; when the database refuses it as a whole (an item it finds
   * malformed), each item again in its own transaction, so one bad item costs only itself. A run
   * that does not exist is {@code not_found} either way.
   */
  private List<CompletionResult> completeAll(String name, List<StepCompletion> items) {
    // A lone completion takes the single-run function: the same semantics, and cheaper than the
    // set-based statements when there is nothing to share them with.
    if (items.size() > 1) {
      try {
        return store.completeBatch(name, items);
      } catch (DatabaseException e) {
        if (e.status() >= 500) {
          throw e;
        }
      }
    }
    List<CompletionResult> out = new ArrayList<>(items.size());
    for (StepCompletion c : items) {
      try {
        out.add(completeOne(c));
      } catch (DatabaseException e) {
        int status = e.status();
        if (status >= 500) {
          throw e;
        }
        if ("P0002".equals(e.sqlState()) && e.serverMessage().startsWith("workflow run ")) {
          out.add(CompletionResult.of(CompletionOutcome.of("not_found")));
          continue;
        }
        out.add(CompletionResult.of(CompletionOutcome.rejected(status, e.serverMessage())));
      }
    }
    return out;
  }

  /** What follows an accepted step: a timer, the step metric, and the end of a run it ended. */
  private void followUp(String name, StepCompletion c, CompletionResult r) {
    String outcome = r.outcome().outcome();
    // paused: the step went through and its run was handed back, to wait for a resume.
    if (!"ok".equals(outcome) && !"paused".equals(outcome)) {
      return;
    }
    Next n = c.next();
    if (n != null && n.delayMs() != null && n.delayMs() > 0 && n.delayMs() <= TIMER_HORIZON_MS) {
      // A sleep or wait timeout due soon: wake this server's pollers when it is, rather
      // than leaving it to the fallback tick (no NOTIFY is sent for delayed messages).
      timers.wakeAt(Names.workflowQueue(name), clock.instant().plusMillis(n.delayMs()));
    }
    if (c.step() != null && c.stepSeconds() != null) {
      events.stepCompleted(name, c.step().name(), c.stepSeconds());
    }
    if (c.step() != null && c.step().state() != null) {
      stateChanged.accept(c.runId());
    }
    RunEnd end = r.runEnd();
    if (c.result() != null && end.ended()) {
      runEnds.ended(
          name,
          c.runId(),
          end.version(),
          c.result().status(),
          end.startedAt(),
          end.completedAt(),
          end.traceContext());
    }
  }
}
