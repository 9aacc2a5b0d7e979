package dev.pgworkflows.server.internal.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.javalin.http.Handler;
import java.util.ArrayList;
import java.util.List;

/**
 * What runs around every request (its id, span, authentication, timing), installed as one before
 * and one after handler. Javalin matches each before and after handler's path against every request
 * and extracts its path parameters, so one of each costs less than one per concern.
 *
 * <p>Before hooks run in the order added; the first that throws ends the request as a before
 * handler's exception would, and the later ones do not run. After hooks run in the order added.
 */
public final class RequestHooks {
  private final List<Handler> before = new ArrayList<>();
  private final List<Handler> after = new ArrayList<>();

  public RequestHooks before(Handler hook) {
    before.add(hook);
    return this;
  }

  public RequestHooks after(Handler hook) {
    after.add(hook);
    return this;
  }

  /** Installs the hooks added so far. */
  public void install(RoutesConfig routes) {
    Handler[] b = before.toArray(Handler[]::new);
    Handler[] a = after.toArray(Handler[]::new);
    routes.before(ctx -> run(b, ctx));
    routes.after(ctx -> run(a, ctx));
  }

  private static void run(Handler[] hooks, Context ctx) throws Exception {
    for (Handler h : hooks) {
      h.handle(ctx);
    }
  }
}
