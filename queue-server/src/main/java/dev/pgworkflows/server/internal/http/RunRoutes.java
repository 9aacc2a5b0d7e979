package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.runtime.RunEnds;
import dev.pgworkflows.engine.internal.runtime.WorkflowEvents;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.store.StoredRun;
import dev.pgworkflows.protocol.CancelOutcome;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.SignalOutcome;
import dev.pgworkflows.protocol.Signals;
import dev.pgworkflows.protocol.Workflows;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The design doc's {@code /v1/workflows} routes besides starts: list, get, cancel, signal, the
 * run's signals, steps.
 */
public final class RunRoutes {
  private static final Pattern EVENT = Pattern.compile("[A-Za-z0-9._:-]{1,128}");

  /** The header that makes a signal idempotent: a repeat of its key stores nothing. */
  static final String IDEMPOTENCY_KEY = "Idempotency-Key";

  private static final Set<String> STATUSES =
      Set.of("running", "completed", "failed", "cancelled", "timed_out");

  private final RunStore store;
  private final RunEnds runEnds;
  private final WorkflowEvents events;
  private final Tracing tracing;

  public RunRoutes(RunStore store, RunEnds runEnds, WorkflowEvents events, Tracing tracing) {
    this.store = store;
    this.runEnds = runEnds;
    this.events = events;
    this.tracing = tracing;
  }

  /** The index of workflows; registered apart, ahead of the starts, as it always was. */
  public void registerIndex(RoutesConfig routes) {
    routes.get(
        "/v1/workflows", ctx -> JsonBodies.respond(ctx, 200, new Workflows(store.summary())));
  }

  public void register(RoutesConfig routes) {
    routes.get("/v1/workflows/{name}/runs", this::list);
    routes.get("/v1/workflows/{name}/runs/{runId}", this::get);
    routes.delete("/v1/workflows/{name}/runs/{runId}", this::cancel);
    routes.post("/v1/workflows/{name}/runs/{runId}/signals/{event}", this::signal);
    routes.get("/v1/workflows/{name}/runs/{runId}/signals", this::signals);
    routes.get("/v1/workflows/{name}/runs/{runId}/steps", this::steps);
  }

  private void list(Context ctx) {
    String name = Params.workflow(ctx);
    String status = ctx.queryParam("status");
    if (status != null && !STATUSES.contains(status)) {
      throw ApiException.badRequest("status", "status must be one of " + STATUSES);
    }
    int limit = Params.intQuery(ctx, "limit", 50, 1, 1000);
    Long cursor = ctx.queryParam("cursor") == null ? null : Params.longQuery(ctx, "cursor", 0);
    String input = RunFilters.inputFilter(ctx.queryParamMap());
    Long parent = ctx.queryParam("parent") == null ? null : positive(ctx.queryParam("parent"));
    List<Run> runs =
        store.list(
            name,
            status,
            RunFilters.instant(ctx, "since"),
            RunFilters.instant(ctx, "until"),
            input,
            cursor,
            limit,
            parent);
    String next = runs.size() == limit ? Long.toString(runs.get(runs.size() - 1).runId()) : null;
    JsonBodies.respond(ctx, 200, new RunPage(runs, next));
  }

  /** The {@code parent} query parameter: a run id. */
  private static long positive(String raw) {
    try {
      long v = Long.parseLong(raw);
      if (v >= 1) {
        return v;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw ApiException.badRequest("parent", "parent must be a run id (a positive integer)");
  }

  private StoredRun run(String name, long runId) {
    return store
        .get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
  }

  /** The run with the children it started (the list's pages leave them out). */
  private void get(Context ctx) {
    long runId = Params.runId(ctx);
    Run run = run(Params.workflow(ctx), runId).run();
    JsonBodies.respond(ctx, 200, run.withChildren(store.children(runId)));
  }

  private void steps(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    String setAside = ctx.queryParam("setAside");
    if (setAside != null && !setAside.equals("true") && !setAside.equals("false")) {
      throw ApiException.badRequest("setAside", "setAside must be true or false");
    }
    run(name, runId);
    // With setAside=true also the rows restarts set aside, each marked.
    String journal = "true".equals(setAside) ? store.journalWithAside(runId) : store.journal(runId);
    ctx.status(200)
        .contentType("application/json")
        .result("{\"runId\":" + runId + ",\"steps\":" + journal + "}");
  }

  private void cancel(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    StoredRun addressed = run(name, runId);
    // A run that continued as new passes the cancel on to its chain's last run.
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
    JsonBodies.respond(ctx, 200, new CancelOutcome(runId, c.status(), c.cancelled()));
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

  /**
   * A signal: delivered at once when it fits the run's wait, otherwise kept in the run's inbox for
   * a later wait; a repeated {@code Idempotency-Key} stores nothing. A run that has ended takes
   * none (409).
   */
  private void signal(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    String event = ctx.pathParam("event");
    if (!EVENT.matcher(event).matches()) {
      throw ApiException.badRequest(
          "event",
          "event must be 1 to 128 characters of A-Z, a-z, 0-9, \".\", \"_\", \":\", \"-\"");
    }
    if (event.startsWith("__")) {
      throw ApiException.badRequest(
          "event", "event names starting with \"__\" are the engine's own (such as a child's end)");
    }
    String key = ctx.header(IDEMPOTENCY_KEY);
    if (key != null && (key.isEmpty() || key.codePointCount(0, key.length()) > 255)) {
      throw ApiException.badRequest(
          IDEMPOTENCY_KEY, IDEMPOTENCY_KEY + " must be 1 to 255 characters");
    }
    if (ctx.bodyAsBytes().length == 0) {
      throw ApiException.badRequest(null, "the signal payload is the JSON request body");
    }
    JsonNode payload = JsonBodies.read(ctx, JsonNode.class);
    run(name, runId);
    RunStore.Signalled s = store.signal(runId, event, Json.write(payload), key);
    switch (s.outcome()) {
      case "no such run" ->
          throw ApiException.notFound("workflow " + name + " has no run " + runId);
      case "not running" ->
          throw ApiException.conflict(
              "run " + runId + " has ended: " + run(name, runId).run().status());
      case "delivered", "buffered" -> events.signalled(name, event);
      default -> {
        // duplicate: answered as such, counted the first time
      }
    }
    tracing.signalled(ctx, name, runId, event, s.outcome());
    JsonBodies.respond(
        ctx,
        200,
        new SignalOutcome(runId, s.signalId(), s.outcome(), "delivered".equals(s.outcome())));
  }

  /** A run's signals in the order they were sent: buffered ones, and those a wait took. */
  private void signals(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    run(name, runId);
    JsonBodies.respond(ctx, 200, new Signals(runId, store.signals(runId)));
  }
}
