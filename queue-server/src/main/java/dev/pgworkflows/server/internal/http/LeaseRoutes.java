package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.runtime.SlotReport;
import dev.pgworkflows.engine.internal.runtime.TaskStreams;
import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.protocol.LeaseRequest;
import dev.pgworkflows.protocol.RetryOutcome;
import dev.pgworkflows.protocol.RetryRequest;
import dev.pgworkflows.protocol.RouteOutcome;
import dev.pgworkflows.protocol.RouteRequest;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/**
 * A worker's hold on a task: hand it back to be due later, extend the lease on it, or hand it to
 * workers with the labels its next step needs.
 */
public final class LeaseRoutes {
  private final WorkerCalls calls;
  private final TaskStreams streams;

  public LeaseRoutes(WorkerCalls calls, TaskStreams streams) {
    this.calls = calls;
    this.streams = streams;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/retry", this::retry);
    routes.post("/v1/workflows/{name}/runs/{runId}/lease", this::lease);
    routes.post("/v1/workflows/{name}/runs/{runId}/route", this::route);
  }

  private void route(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    SlotReport report = SlotReports.parse(ctx.header(SlotReports.HEADER));
    RouteOutcome outcome = calls.route(name, runId, JsonBodies.read(ctx, RouteRequest.class));
    streams.apply(name, report, 0);
    JsonBodies.respond(ctx, 200, outcome);
  }

  private void retry(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    SlotReport report = SlotReports.parse(ctx.header(SlotReports.HEADER));
    RetryOutcome outcome = calls.retry(name, runId, JsonBodies.read(ctx, RetryRequest.class));
    streams.apply(name, report, 0);
    JsonBodies.respond(ctx, 200, outcome);
  }

  private void lease(Context ctx) {
    Params.workflow(ctx);
    long runId = Params.runId(ctx);
    JsonBodies.respond(ctx, 200, calls.extend(runId, JsonBodies.read(ctx, LeaseRequest.class)));
  }
}
