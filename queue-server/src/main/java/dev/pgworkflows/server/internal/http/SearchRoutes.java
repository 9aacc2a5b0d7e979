package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.search.RunQuery;
import dev.pgworkflows.engine.internal.store.DatabaseException;
import dev.pgworkflows.engine.internal.store.SearchStore;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunAttributes;
import dev.pgworkflows.protocol.RunCount;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.SearchAttribute;
import dev.pgworkflows.protocol.SearchAttributes;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.List;

/**
 * Search attributes and queries over every workflow's runs: {@code GET /v1/runs?query=...} and its
 * count, the attributes defined, and a run's attributes, read and set.
 */
public final class SearchRoutes {
  private final SearchStore store;

  public SearchRoutes(SearchStore store) {
    this.store = store;
  }

  public void register(RoutesConfig routes) {
    routes.get("/v1/runs", this::search);
    routes.get("/v1/runs/count", this::count);
    routes.get("/v1/search-attributes", this::attributes);
    routes.put("/v1/search-attributes/{attribute}", this::define);
    routes.get("/v1/workflows/{name}/runs/{runId}/attributes", this::runAttributes);
    routes.put("/v1/workflows/{name}/runs/{runId}/attributes", this::setRunAttributes);
  }

  private static JsonNode query(Context ctx) {
    String text = ctx.queryParam("query");
    return text == null ? null : RunQuery.parse(text);
  }

  private void search(Context ctx) {
    int limit = Params.intQuery(ctx, "limit", 50, 1, 1000);
    Long cursor = ctx.queryParam("cursor") == null ? null : Params.longQuery(ctx, "cursor", 0);
    JsonNode query = query(ctx);
    List<Run> runs;
    try {
      runs = store.search(query, cursor, limit);
    } catch (DatabaseException e) {
      throw named(e, "query");
    }
    String next = runs.size() == limit ? Long.toString(runs.get(runs.size() - 1).runId()) : null;
    JsonBodies.respond(ctx, 200, new RunPage(runs, next));
  }

  private void count(Context ctx) {
    JsonBodies.respond(ctx, 200, new RunCount(ctx.queryParam("query"), store.count(query(ctx))));
  }

  private void attributes(Context ctx) {
    JsonBodies.respond(ctx, 200, new SearchAttributes(store.attributes()));
  }

  /** The body: {@code {"type": "number"}}. 201 when defined now, 200 when it was already. */
  private void define(Context ctx) {
    Definition body = JsonBodies.read(ctx, Definition.class);
    if (body == null || body.type() == null) {
      throw ApiException.badRequest(
          "type", "type is required: text, keyword_list, number, boolean or time");
    }
    SearchAttribute a = store.define(ctx.pathParam("attribute"), body.type());
    JsonBodies.respond(ctx, Boolean.TRUE.equals(a.created()) ? 201 : 200, a);
  }

  private record Definition(String type) {}

  private void runAttributes(Context ctx) {
    long runId = Params.runId(ctx);
    String name = Params.workflow(ctx);
    String attributes =
        store
            .attributes(name, runId)
            .orElseThrow(
                () ->
                    ApiException.notFound("run " + runId + " of workflow " + name + " not found"));
    JsonBodies.respond(ctx, 200, new RunAttributes(runId, attributes));
  }

  /** The body: {@code {"attributes": {"customer": "acme", "amount": null}}}. */
  private void setRunAttributes(Context ctx) {
    long runId = Params.runId(ctx);
    String name = Params.workflow(ctx);
    RunAttributes body = JsonBodies.read(ctx, RunAttributes.class);
    if (body == null || body.attributes() == null || body.attributes().equals("null")) {
      throw ApiException.badRequest(
          "attributes", "attributes is required: an object of search attribute names to values");
    }
    String now;
    try {
      now = store.set(name, runId, body.attributes());
    } catch (DatabaseException e) {
      // The database names the attribute first: "attributes.amount is a number attribute: ..."
      String message = e.serverMessage();
      throw named(e, message.startsWith("attributes") ? message.split(" ", 2)[0] : "attributes");
    }
    JsonBodies.respond(ctx, 200, new RunAttributes(runId, now));
  }

  /**
   * The database's refusal of bad input as a 400 naming {@code field}; anything else as it came.
   */
  private static RuntimeException named(DatabaseException e, String field) {
    if ("22023".equals(e.sqlState())) {
      return ApiException.badRequest(field, e.serverMessage());
    }
    return e;
  }
}
