package dev.pgworkflows.engine.internal.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.FlowChecks;
import dev.pgworkflows.engine.internal.checks.StartTimings;
import dev.pgworkflows.engine.internal.checks.WorkerChecks;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.ChainStore;
import dev.pgworkflows.engine.internal.store.NewRun;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.store.StoredRun;
import dev.pgworkflows.engine.internal.telemetry.RunTrace;
import dev.pgworkflows.protocol.CancelOutcome;
import dev.pgworkflows.protocol.Limits;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.Rejected;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.SignalOutcome;
import dev.pgworkflows.protocol.StartAnswer;
import dev.pgworkflows.protocol.StartBatchItem;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.UpdateResult;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * What a client asks of the engine about runs, whichever way it comes (a server route, or a client
 * in this process over JDBC): start, signal, read and cancel. Each call checks its request, makes
 * the database call that does it, and reports what follows (counters, the spans of runs it ended).
 */
public final class RunCalls {

  private final Starts starts;
  private final RunStore store;
  private final ChainStore chains;
  private final RunEnds runEnds;
  private final WorkflowEvents events;

  public RunCalls(
      Starts starts, RunStore store, ChainStore chains, RunEnds runEnds, WorkflowEvents events) {
    this.starts = starts;
    this.store = store;
    this.chains = chains;
    this.runEnds = runEnds;
    this.events = events;
  }

  /** Starts a run (or finds the one its idempotency key names); {@code trace} may be null. */
  public StartResult start(String name, StartRequest req, RunTrace trace) {
    return starts.start(name, newRun(req).traced(trace == null ? null : trace.encode()));
  }

  /**
   * Starts a run (or finds the one the start's idempotency key names) and sends it update {@code
   * update} with {@code input} (JSON text) in one transaction: the update as it stands, with
   * whether the run was made.
   */
  public UpdateResult startWithUpdate(
      String name, StartRequest req, RunTrace trace, String update, String input, String key) {
    return starts.startWithUpdate(
        name, newRun(req).traced(trace == null ? null : trace.encode()), update, input, key);
  }

  /** The most starts one batch may carry. */
  public static final int MAX_BATCH = Limits.MAX_BATCH;

  /**
   * Many starts of one workflow, answered one by one in order: the answer a single start gives, or
   * {@code rejected} with a status and a detail; one bad item costs only itself. The valid ones
   * start in one transaction (should the database refuse that as a whole, each in its own). {@code
   * traces} gives each item's run its trace identity from the item's {@code traceparent}.
   */
  public List<StartAnswer> startMany(
      String name, List<StartBatchItem> items, Function<String, RunTrace> traces) {
    if (items == null || items.isEmpty() || items.size() > MAX_BATCH) {
      throw ApiException.badRequest("runs", "runs must hold 1 to " + MAX_BATCH + " runs");
    }
    int n = items.size();
    List<StartAnswer> answers = new ArrayList<>(n);
    List<NewRun> accepted = new ArrayList<>(n);
    List<Integer> at = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      answers.add(null);
      StartBatchItem item = items.get(i);
      try {
        if (item == null) {
          throw ApiException.badRequest("runs", "a run must be an object");
        }
        NewRun run =
            newRun(
                new StartRequest(
                        item.input(),
                        item.version(),
                        item.idempotencyKey(),
                        item.retentionDays(),
                        item.timing())
                    .withFlow(item.concurrencyKey(), item.priority())
                    .withAttributes(item.attributes()));
        RunTrace trace = traces.apply(item.traceparent());
        accepted.add(run.traced(trace == null ? null : trace.encode()));
        at.add(i);
      } catch (ApiException e) {
        answers.set(i, Rejected.of(e.status(), e.getMessage()));
      }
    }
    if (!accepted.isEmpty()) {
      List<StartAnswer> results = starts.startMany(name, accepted);
      for (int k = 0; k < results.size(); k++) {
        answers.set(at.get(k), results.get(k));
      }
    }
    return answers;
  }

  /** Checks a start's fields; the run has no trace yet. Each failure a 400 naming the field. */
  public static NewRun newRun(StartRequest req) {
    if (req.version() != null) {
      WorkerChecks.range("version", req.version(), 1, 1, 1_000_000);
    }
    if (req.retentionDays() != null) {
      WorkerChecks.range("retentionDays", req.retentionDays(), 30, 1, 36500);
    }
    if (req.idempotencyKey() != null
        && (req.idempotencyKey().isEmpty() || req.idempotencyKey().length() > 255)) {
      throw ApiException.badRequest("idempotencyKey", "idempotencyKey must be 1 to 255 characters");
    }
    return new NewRun(
            req.input() == null ? "null" : Json.write(req.input()),
            req.version(),
            req.idempotencyKey(),
            req.retentionDays(),
            null,
            StartTimings.check(req.timing(), req.idempotencyKey()),
            null,
            null,
            null)
        .withFlow(
            FlowChecks.key("concurrencyKey", req.concurrencyKey()),
            FlowChecks.priority(req.priority()))
        .withAttributes(attributes(req.attributes()));
  }

  /** A start's search attributes as JSON text: an object, checked by the database as it starts. */
  private static String attributes(JsonNode attributes) {
    if (attributes == null || attributes.isNull()) {
      return null;
    }
    if (!attributes.isObject()) {
      throw ApiException.badRequest(
          "attributes", "attributes must be an object of search attribute names to values");
    }
    return Json.write(attributes);
  }

  /**
   * A signal: delivered at once when it fits the run's wait, otherwise kept in the run's inbox for
   * a later wait; a repeated {@code key} stores nothing. A run that has ended takes none (409).
   * {@code keyField} names where the key came from, for a refusal.
   */
  public SignalOutcome signal(
      String name, long runId, String event, JsonNode payload, String key, String keyField) {
    checkSignal(event, key, keyField);
    run(name, runId);
    RunStore.Signalled s = store.signal(runId, event, Json.write(payload), key);
    switch (s.outcome()) {
      case "no such run" ->
          throw ApiException.notFound("workflow " + name + " has no run " + runId);
      case "not running" ->
          throw ApiException.conflict(
              "run " + runId + " has ended: " + run(name, runId).run().status());
      case "delivered", "buffered", "cancelled" -> events.signalled(name, event);
      default -> {
        // duplicate: answered as such, counted the first time
      }
    }
    return new SignalOutcome(runId, s.signalId(), s.outcome(), "delivered".equals(s.outcome()));
  }

  /** Checks a signal's event name and idempotency key; each failure a 400 naming the field. */
  public static void checkSignal(String event, String key, String keyField) {
    if (!Names.isEventName(event)) {
      throw ApiException.badRequest(
          "event",
          "event must be 1 to 128 characters of A-Z, a-z, 0-9, \".\", \"_\", \":\", \"-\"");
    }
    if (event.startsWith("__")) {
      throw ApiException.badRequest(
          "event", "event names starting with \"__\" are the engine's own (such as a child's end)");
    }
    if (key != null && (key.isEmpty() || key.codePointCount(0, key.length()) > 255)) {
      throw ApiException.badRequest(keyField, keyField + " must be 1 to 255 characters");
    }
  }

  /** The run with the children it started; a 404 when {@code name} has no such run. */
  public Run get(String name, long runId) {
    return run(name, runId).run().withChildren(store.children(runId));
  }

  /** The last run of the chain {@code runId} continued into (itself when it did not continue). */
  public Run chainLast(String name, long runId) {
    run(name, runId);
    return chains.last(runId);
  }

  /**
   * Cancels a run, and the running children it started (and theirs); a run that continued as new
   * passes the cancel on to its chain's last run.
   */
  public CancelOutcome cancel(String name, long runId) {
    StoredRun addressed = run(name, runId);
    long target =
        addressed.run().continuedTo() == null
            ? runId
            : store.chainLast(runId).map(s -> s.run().runId()).orElse(runId);
    // The cancel takes running children (and theirs) with it: their ends are reported too.
    List<Run.Child> running = runningDescendants(runId);
    if (target != runId) {
      running.addAll(runningDescendants(target));
    }
    RunStore.Cancelled c = store.cancel(runId);
    if (c.cancelled()) {
      store
          .get(name, target)
          .filter(s -> s.run().status().equals("cancelled"))
          .ifPresent(this::ended);
    }
    for (Run.Child child : running) {
      store
          .get(child.workflow(), child.runId())
          .filter(s -> s.run().status().equals("cancelled"))
          .ifPresent(this::ended);
    }
    return new CancelOutcome(runId, c.status(), c.cancelled());
  }

  /** The stored run; a 404 when {@code name} has no run {@code runId}. */
  public StoredRun run(String name, long runId) {
    return store
        .get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
  }

  /** The running runs a run started, and theirs, depth first. */
  private List<Run.Child> runningDescendants(long runId) {
    List<Run.Child> out = new ArrayList<>();
    for (Run.Child child : store.children(runId)) {
      if (child.status().equals("running")) {
        out.add(child);
        out.addAll(runningDescendants(child.runId()));
      }
    }
    return out;
  }

  /** Reports a run that a cancel ended: its metrics and its span. */
  private void ended(StoredRun stored) {
    Run r = stored.run();
    runEnds.ended(
        r.workflow(),
        r.runId(),
        r.version(),
        "cancelled",
        r.startedAt(),
        r.completedAt(),
        stored.traceContext());
  }
}
