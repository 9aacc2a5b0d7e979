package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.store.WorkerStore;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.Workers;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/**
 * {@code GET /v1/workers[?workflow=]}: the workers every server has seen within the expiry, with
 * their versions, slots and whether they stream or poll.
 */
public final class WorkerRoutes {
  private final WorkerStore store;
  private final long expiryMs;

  public WorkerRoutes(WorkerStore store, long expiryMs) {
    this.store = store;
    this.expiryMs = expiryMs;
  }

  public void register(RoutesConfig routes) {
    routes.get("/v1/workers", this::workers);
  }

  private void workers(Context ctx) {
    String workflow = ctx.queryParam("workflow");
    if (workflow != null && !Names.isWorkflowName(workflow)) {
      throw ApiException.badRequest(
          "workflow",
          "workflow must be a workflow name: 1 to 43 characters of a-z, 0-9, \"_\" and \"-\","
              + " not starting with \"-\"");
    }
    JsonBodies.respond(ctx, 200, new Workers(store.list(workflow, expiryMs)));
  }
}
