package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.protocol.JournalRequest;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/**
 * Journaling the finished branches of a parallel group: many {@code run} steps of one run in one
 * request and one statement, under the run's lease, which carries on.
 */
public final class JournalRoutes {
  private final WorkerCalls calls;

  public JournalRoutes(WorkerCalls calls) {
    this.calls = calls;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/steps", this::journal);
  }

  private void journal(Context ctx) {
    Params.workflow(ctx);
    long runId = Params.runId(ctx);
    JsonBodies.respond(ctx, 200, calls.journal(runId, JsonBodies.read(ctx, JournalRequest.class)));
  }

  /** The steps, each a {@code run} step with a name of its own; a 400 naming the first misfit. */
}
