package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.protocol.ChildStartRequest;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/**
 * A worker's step starting a child run: {@code POST /v1/workflows/{name}/runs/{runId}/children}.
 * The child is started once per parent and step, so a replay of the step gets the same child; its
 * end comes back to the parent as the event {@code __child.<childRunId>}. A child may have a
 * concurrency key, a priority and a deadline, as a start may.
 */
public final class ChildRoutes {
  private final WorkerCalls calls;
  private final Tracing tracing;

  public ChildRoutes(WorkerCalls calls, Tracing tracing) {
    this.calls = calls;
    this.tracing = tracing;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/children", this::start);
  }

  private void start(Context ctx) {
    String name = Params.workflow(ctx);
    long parent = Params.runId(ctx);
    ChildStartRequest req = JsonBodies.read(ctx, ChildStartRequest.class);
    JsonBodies.respond(ctx, 200, calls.startChild(name, parent, req, tracing.newRun(ctx)));
  }
}
