package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.store.OperationsStore;
import dev.pgworkflows.engine.internal.store.ParkedView;
import dev.pgworkflows.protocol.GroupPause;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.List;
import java.util.Map;

/**
 * An operator's controls over a queue's message groups: pause and resume a group, park its head
 * (the group goes on with its next message), list parked messages and redrive one.
 */
public final class GroupRoutes {
  private final OperationsStore ops;

  public GroupRoutes(OperationsStore ops) {
    this.ops = ops;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/queues/{queue}/groups/{group}/pause", ctx -> pause(ctx, true));
    routes.post("/v1/queues/{queue}/groups/{group}/resume", ctx -> pause(ctx, false));
    routes.post("/v1/queues/{queue}/groups/{group}/park", this::park);
    routes.get("/v1/queues/{queue}/parked", this::parked);
    routes.post("/v1/queues/{queue}/parked/{id}/redrive", this::redrive);
  }

  private static String group(Context ctx) {
    String group = ctx.pathParam("group");
    if (group.isEmpty() || group.codePointCount(0, group.length()) > 128) {
      throw ApiException.badRequest("group", "group must be 1 to 128 characters");
    }
    return group;
  }

  private void pause(Context ctx, boolean paused) {
    String queue = Params.notWorkflowQueue(ctx, paused ? "group pause" : "group resume");
    String group = group(ctx);
    ops.pauseGroup(queue, group, paused);
    JsonBodies.respond(ctx, 200, new GroupPause(queue, group, paused));
  }

  private void park(Context ctx) {
    String queue = Params.notWorkflowQueue(ctx, "parking");
    String group = group(ctx);
    ParkedView parked =
        ops.park(queue, group)
            .orElseThrow(
                () ->
                    ApiException.notFound(
                        "group \"" + group + "\" of queue \"" + queue + "\" has no message"));
    JsonBodies.respond(ctx, 200, parked);
  }

  private void parked(Context ctx) {
    String queue = Params.queue(ctx);
    int limit = Params.intQuery(ctx, "limit", 100, 1, 1000);
    long after = Params.longQuery(ctx, "after", 0);
    List<ParkedView> page = ops.parked(queue, limit, after);
    Map<String, Object> body =
        page.size() == limit
            ? Map.of("messages", page, "next", page.get(page.size() - 1).id())
            : Map.of("messages", page);
    JsonBodies.respond(ctx, 200, body);
  }

  private void redrive(Context ctx) {
    String queue = Params.notWorkflowQueue(ctx, "redrive");
    long id = Params.longPath(ctx, "id");
    long messageId = ops.redrive(queue, id);
    JsonBodies.respond(ctx, 200, Map.of("queue", queue, "id", id, "messageId", messageId));
  }
}
