package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.store.QueueStore;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.List;
import java.util.Map;

/**
 * {@code /v1/queues}: create, list, inspect, purge and drop queues. A workflow's queue {@code
 * __wf_<name>} may be listed and inspected, never created, purged or dropped here.
 */
public final class QueueRoutes {
  /** Body of {@code PUT /v1/queues/{queue}}; every field optional. */
  record CreateQueue(Boolean fifo, Integer visibilityTimeoutSeconds, Integer maxReceives) {}

  private final QueueStore store;

  public QueueRoutes(QueueStore store) {
    this.store = store;
  }

  public void register(RoutesConfig routes) {
    routes.put("/v1/queues/{queue}", this::create);
    routes.get("/v1/queues", ctx -> JsonBodies.respond(ctx, 200, Map.of("queues", store.list())));
    routes.get("/v1/queues/{queue}", this::get);
    routes.delete("/v1/queues/{queue}", this::drop);
    routes.post("/v1/queues/{queue}/purge", this::purge);
  }

  private void create(Context ctx) {
    String name = Params.notWorkflowQueue(ctx, "create or reconfigure");
    CreateQueue req =
        ctx.bodyAsBytes().length == 0
            ? new CreateQueue(null, null, null)
            : JsonBodies.read(ctx, CreateQueue.class);
    int vt = Params.range("visibilityTimeoutSeconds", req.visibilityTimeoutSeconds(), 30, 0, 43200);
    if (req.maxReceives() != null) {
      Params.range("maxReceives", req.maxReceives(), 1, 1, 1000);
    }
    boolean created = store.create(name, Boolean.TRUE.equals(req.fifo()), vt, req.maxReceives());
    JsonBodies.respond(ctx, created ? 201 : 200, store.get(name).orElseThrow());
  }

  private void get(Context ctx) {
    String name = Params.queue(ctx);
    JsonBodies.respond(ctx, 200, store.get(name).orElseThrow(() -> missing(name)));
  }

  private void drop(Context ctx) {
    String name = Params.notWorkflowQueue(ctx, "drop");
    if (!store.drop(name)) {
      throw missing(name);
    }
    ctx.status(204);
  }

  private void purge(Context ctx) {
    String name = Params.notWorkflowQueue(ctx, "purge");
    JsonBodies.respond(ctx, 200, Map.of("purged", store.purge(name)));
  }

  static ApiException missing(String name) {
    return ApiException.notFound("queue \"" + name + "\" does not exist");
  }

  static List<Long> ids(List<Long> ids, String field) {
    if (ids == null) {
      throw ApiException.badRequest(field, field + " is required");
    }
    if (ids.size() > 1000) {
      throw ApiException.badRequest(field, field + " may hold at most 1000 ids");
    }
    for (Long id : ids) {
      if (id == null || id < 1) {
        throw ApiException.badRequest(field, field + " must hold positive integers");
      }
    }
    return ids;
  }
}
