package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.runtime.RunCalls;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.store.StoredRun;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.SignalOutcome;
import dev.pgworkflows.protocol.Signals;
import dev.pgworkflows.protocol.Workflows;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.List;
import java.util.Set;

/**
 * The design doc's {@code /v1/workflows} routes besides starts: list, get, cancel, signal, the
 * run's signals, steps.
 */
public final class RunRoutes {
  /** The header that makes a signal idempotent: a repeat of its key stores nothing. */
  static final String IDEMPOTENCY_KEY = "Idempotency-Key";

  private static final Set<String> STATUSES =
      Set.of("running", "completed", "failed", "cancelled", "timed_out");

  private final RunStore store;
  private final RunCalls calls;
  private final Tracing tracing;

  public RunRoutes(RunStore store, RunCalls calls, Tracing tracing) {
    this.store = store;
    this.calls = calls;
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
    return calls.run(name, runId);
  }

  /** The run with the children it started (the list's pages leave them out). */
  private void get(Context ctx) {
    JsonBodies.respond(ctx, 200, calls.get(Params.workflow(ctx), Params.runId(ctx)));
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
    JsonBodies.respond(ctx, 200, calls.cancel(Params.workflow(ctx), Params.runId(ctx)));
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
    String key = ctx.header(IDEMPOTENCY_KEY);
    RunCalls.checkSignal(event, key, IDEMPOTENCY_KEY);
    if (ctx.bodyAsBytes().length == 0) {
      throw ApiException.badRequest(null, "the signal payload is the JSON request body");
    }
    JsonNode payload = JsonBodies.read(ctx, JsonNode.class);
    SignalOutcome s = calls.signal(name, runId, event, payload, key, IDEMPOTENCY_KEY);
    tracing.signalled(ctx, name, runId, event, s.outcome());
    JsonBodies.respond(ctx, 200, s);
  }

  /** A run's signals in the order they were sent: buffered ones, and those a wait took. */
  private void signals(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    run(name, runId);
    JsonBodies.respond(ctx, 200, new Signals(runId, store.signals(runId)));
  }
}
