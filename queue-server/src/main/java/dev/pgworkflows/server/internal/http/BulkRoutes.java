package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.runtime.BulkCalls;
import dev.pgworkflows.protocol.BulkRequest;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/**
 * Bulk operations ({@code /v1/batches}): made by an operator with a query and an action, listed,
 * read with their progress and each run's outcome, and cancelled.
 */
public final class BulkRoutes {
  private final BulkCalls calls;

  public BulkRoutes(BulkCalls calls) {
    this.calls = calls;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/batches", this::create);
    routes.get("/v1/batches", this::list);
    routes.get("/v1/batches/{batchId}", ctx -> JsonBodies.respond(ctx, 200, calls.get(id(ctx))));
    routes.get("/v1/batches/{batchId}/runs", this::runs);
    routes.post(
        "/v1/batches/{batchId}/cancel", ctx -> JsonBodies.respond(ctx, 200, calls.cancel(id(ctx))));
  }

  private void create(Context ctx) {
    BulkRequest body = JsonBodies.read(ctx, BulkRequest.class);
    Auth.Caller caller = Auth.caller(ctx);
    JsonBodies.respond(ctx, 201, calls.create(body, caller == null ? null : caller.name()));
  }

  private void list(Context ctx) {
    int limit = Params.intQuery(ctx, "limit", 50, 1, 1000);
    Long cursor = ctx.queryParam("cursor") == null ? null : Params.longQuery(ctx, "cursor", 0);
    JsonBodies.respond(ctx, 200, calls.list(cursor, limit));
  }

  private void runs(Context ctx) {
    int limit = Params.intQuery(ctx, "limit", 100, 1, 1000);
    Long cursor = ctx.queryParam("cursor") == null ? null : Params.longQuery(ctx, "cursor", 0);
    JsonBodies.respond(ctx, 200, calls.runs(id(ctx), ctx.queryParam("outcome"), cursor, limit));
  }

  private static long id(Context ctx) {
    try {
      long id = Long.parseLong(ctx.pathParam("batchId"));
      if (id >= 1) {
        return id;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw ApiException.badRequest("batchId", "batchId must be a positive integer");
  }
}
