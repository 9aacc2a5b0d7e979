package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.BlockerStore;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/**
 * {@code GET /v1/workflows/{name}/runs/{runId}/blockers}: why a run is not running now, in plain
 * words and as data; an empty list when its task is due and about to be handed out.
 */
public final class BlockerRoutes {
  private final BlockerStore store;
  private final long workerExpiryMs;

  public BlockerRoutes(BlockerStore store, long workerExpiryMs) {
    this.store = store;
    this.workerExpiryMs = workerExpiryMs;
  }

  public void register(RoutesConfig routes) {
    routes.get("/v1/workflows/{name}/runs/{runId}/blockers", this::blockers);
  }

  private void blockers(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    String answer =
        store
            .blockers(name, runId, workerExpiryMs)
            .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
    JsonBodies.respond(ctx, 200, kindFirst(answer));
  }

  /** The answer with each blocker's kind and text ahead of its data, for a reader's eye. */
  private static JsonNode kindFirst(String answer) {
    try {
      ObjectNode root = (ObjectNode) Json.MAPPER.readTree(answer);
      ArrayNode ordered = Json.MAPPER.createArrayNode();
      for (JsonNode b : root.path("blockers")) {
        ObjectNode o = ordered.addObject();
        o.set("kind", b.get("kind"));
        o.set("text", b.get("text"));
        o.setAll((ObjectNode) b);
      }
      ObjectNode out = Json.MAPPER.createObjectNode();
      out.set("runId", root.get("runId"));
      out.set("status", root.get("status"));
      out.set("blockers", ordered);
      return out;
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("workflow_blockers answered no JSON", e);
    }
  }
}
