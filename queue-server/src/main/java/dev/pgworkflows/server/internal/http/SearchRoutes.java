package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.runtime.SearchCalls;
import dev.pgworkflows.protocol.RunAttributes;
import dev.pgworkflows.protocol.RunCount;
import dev.pgworkflows.protocol.SearchAttribute;
import dev.pgworkflows.protocol.SearchAttributes;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/**
 * Search attributes and queries over every workflow's runs: {@code GET /v1/runs?query=...} and its
 * count, the attributes defined, and a run's attributes, read and set.
 */
public final class SearchRoutes {
  private final SearchCalls calls;

  public SearchRoutes(SearchCalls calls) {
    this.calls = calls;
  }

  public void register(RoutesConfig routes) {
    routes.get("/v1/runs", this::search);
    routes.get("/v1/runs/count", this::count);
    routes.get("/v1/search-attributes", this::attributes);
    routes.put("/v1/search-attributes/{attribute}", this::define);
    routes.get("/v1/workflows/{name}/runs/{runId}/attributes", this::runAttributes);
    routes.put("/v1/workflows/{name}/runs/{runId}/attributes", this::setRunAttributes);
  }

  private void search(Context ctx) {
    int limit = Params.intQuery(ctx, "limit", 50, 1, 1000);
    Long cursor = ctx.queryParam("cursor") == null ? null : Params.longQuery(ctx, "cursor", 0);
    JsonBodies.respond(ctx, 200, calls.search(ctx.queryParam("query"), cursor, limit));
  }

  private void count(Context ctx) {
    String query = ctx.queryParam("query");
    JsonBodies.respond(ctx, 200, new RunCount(query, calls.count(query)));
  }

  private void attributes(Context ctx) {
    JsonBodies.respond(ctx, 200, new SearchAttributes(calls.attributes()));
  }

  /** The body: {@code {"type": "number"}}. 201 when defined now, 200 when it was already. */
  private void define(Context ctx) {
    Definition body = JsonBodies.read(ctx, Definition.class);
    if (body == null || body.type() == null) {
      throw ApiException.badRequest(
          "type", "type is required: text, keyword_list, number, boolean or time");
    }
    SearchAttribute a = calls.define(ctx.pathParam("attribute"), body.type());
    JsonBodies.respond(ctx, Boolean.TRUE.equals(a.created()) ? 201 : 200, a);
  }

  private record Definition(String type) {}

  private void runAttributes(Context ctx) {
    JsonBodies.respond(ctx, 200, calls.attributes(Params.workflow(ctx), Params.runId(ctx)));
  }

  /** The body: {@code {"attributes": {"customer": "acme", "amount": null}}}. */
  private void setRunAttributes(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    RunAttributes body = JsonBodies.read(ctx, RunAttributes.class);
    JsonBodies.respond(ctx, 200, calls.set(name, runId, body == null ? null : body.attributes()));
  }
}
