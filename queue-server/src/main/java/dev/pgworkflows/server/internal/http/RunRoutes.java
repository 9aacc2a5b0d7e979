package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.CancelOutcome;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.SignalOutcome;
import dev.pgworkflows.protocol.Workflows;
import dev.pgworkflows.server.internal.engine.RunEnds;
import dev.pgworkflows.server.internal.engine.WorkflowEvents;
import dev.pgworkflows.server.internal.json.Json;
import dev.pgworkflows.server.internal.store.RunStore;
import dev.pgworkflows.server.internal.store.StoredRun;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The design doc's {@code /v1/workflows} routes besides starts: list, get, cancel, signal, steps.
 */
public final class RunRoutes {
  private static final Pattern EVENT = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
  private static final Set<String> STATUSES = Set.of("running", "completed", "failed", "cancelled");

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
    List<Run> runs =
        store.list(
            name,
            status,
            RunFilters.instant(ctx, "since"),
            RunFilters.instant(ctx, "until"),
            input,
            cursor,
            limit);
    String next = runs.size() == limit ? Long.toString(runs.get(runs.size() - 1).runId()) : null;
    JsonBodies.respond(ctx, 200, new RunPage(runs, next));
  }

  private StoredRun run(String name, long runId) {
    return store
        .get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
  }

  private void get(Context ctx) {
    JsonBodies.respond(ctx, 200, run(Params.workflow(ctx), Params.runId(ctx)).run());
  }

  private void steps(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    run(name, runId);
    ctx.status(200)
        .contentType("application/json")
        .result("{\"runId\":" + runId + ",\"steps\":" + store.journal(runId) + "}");
  }

  private void cancel(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    run(name, runId);
    RunStore.Cancelled c = store.cancel(runId);
    if (c.cancelled()) {
      StoredRun stored = run(name, runId);
      Run ended = stored.run();
      runEnds.ended(
          name,
          runId,
          ended.version(),
          "cancelled",
          ended.startedAt(),
          ended.completedAt(),
          stored.traceContext());
    }
    JsonBodies.respond(ctx, 200, new CancelOutcome(runId, c.status(), c.cancelled()));
  }

  private void signal(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    String event = ctx.pathParam("event");
    if (!EVENT.matcher(event).matches()) {
      throw ApiException.badRequest(
          "event",
          "event must be 1 to 128 characters of A-Z, a-z, 0-9, \".\", \"_\", \":\", \"-\"");
    }
    if (ctx.bodyAsBytes().length == 0) {
      throw ApiException.badRequest(null, "the signal payload is the JSON request body");
    }
    JsonNode payload = JsonBodies.read(ctx, JsonNode.class);
    run(name, runId);
    RunStore.Signalled s = store.signal(runId, event, Json.write(payload));
    if (s.delivered()) {
      events.signalled(name, event);
    }
    tracing.signalled(ctx, name, runId, event, s.delivered());
    JsonBodies.respond(ctx, 200, new SignalOutcome(runId, s.delivered(), s.reason()));
  }
}
