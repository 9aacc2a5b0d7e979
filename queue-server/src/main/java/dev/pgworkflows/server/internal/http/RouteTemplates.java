package dev.pgworkflows.server.internal.http;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.router.Endpoint;
import io.javalin.router.ParsedEndpoint;
import java.util.function.Supplier;

/**
 * The route template a request was for ({@code /v1/queues/{queue}}), for metrics and span names.
 * Javalin knows it once it has matched the route, which it does after the before handlers: a
 * request a before handler refused (authentication) is looked up here instead, so it is still
 * counted under its route. Null for a path no route has.
 */
public final class RouteTemplates {
  /** A looked-up answer kept on the request, for the second hook that asks. */
  private static final String LOOKED_UP = "routeTemplate";

  /** What {@link #LOOKED_UP} holds for a path no route has. */
  private static final String NONE = "";

  private final Supplier<Javalin> app;

  public RouteTemplates(Supplier<Javalin> app) {
    this.app = app;
  }

  public String of(Context ctx) {
    Endpoint matched = ctx.endpoints().matchedHttpEndpoint();
    if (matched != null) {
      return matched.path;
    }
    String kept = ctx.attribute(LOOKED_UP);
    if (kept == null) {
      Javalin javalin = app.get();
      if (javalin == null) {
        return null;
      }
      ParsedEndpoint found =
          javalin.unsafe.internalRouter.findFirstHttpHandlerEntry(ctx.method(), ctx.path());
      kept = found == null ? NONE : found.endpoint.path;
      ctx.attribute(LOOKED_UP, kept);
    }
    return kept.equals(NONE) ? null : kept;
  }
}
