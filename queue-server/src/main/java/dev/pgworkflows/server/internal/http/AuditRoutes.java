package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.AuditStore;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.util.List;
import java.util.regex.Pattern;

/** {@code GET /v1/audit}: the audit trail of operator actions, newest first, for admins. */
public final class AuditRoutes {
  /** One entry as the API shows it. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Entry(
      long id,
      Instant at,
      String actor,
      String action,
      String target,
      JsonNode details,
      String requestId) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Page(List<Entry> entries, String nextCursor) {}

  private static final Pattern ACTION = Pattern.compile("[a-z][a-z_-]*(\\.[a-z][a-z_-]*)+");

  private final AuditStore store;

  public AuditRoutes(AuditStore store) {
    this.store = store;
  }

  public void register(RoutesConfig routes) {
    routes.get("/v1/audit", this::list);
  }

  private void list(Context ctx) {
    int limit = Params.intQuery(ctx, "limit", 100, 1, 1000);
    Long cursor = ctx.queryParam("cursor") == null ? null : Params.longQuery(ctx, "cursor", 0);
    String action = ctx.queryParam("action");
    if (action != null && (action.length() > 64 || !ACTION.matcher(action).matches())) {
      throw ApiException.badRequest(
          "action", "action must be dot-separated lower-case words, such as queue.purge");
    }
    List<Entry> entries =
        store.list(cursor, limit, action).stream()
            .map(
                e ->
                    new Entry(
                        e.id(),
                        e.at(),
                        e.actor(),
                        e.action(),
                        e.target(),
                        details(e.details()),
                        e.requestId()))
            .toList();
    String next =
        entries.size() == limit ? Long.toString(entries.get(entries.size() - 1).id()) : null;
    JsonBodies.respond(ctx, 200, new Page(entries, next));
  }

  private static JsonNode details(String json) {
    try {
      return Json.MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("the database returned details that are not JSON", e);
    }
  }
}
