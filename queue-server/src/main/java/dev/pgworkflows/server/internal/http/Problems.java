package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.store.DatabaseException;
import dev.pgworkflows.protocol.Problem;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every error leaves as {@code application/problem+json} (RFC 9457). Bad input is a 4xx with the
 * database's or validator's own words; anything unexpected is a 500 whose request id is logged.
 */
public final class Problems {
  private static final Logger log = LoggerFactory.getLogger(Problems.class);

  private Problems() {}

  public static void install(JavalinConfig config) {
    config.routes.exception(
        ApiException.class, (e, ctx) -> write(ctx, e.status(), e.getMessage(), e.field()));
    config.routes.exception(DatabaseException.class, (e, ctx) -> database(ctx, e));
    config.routes.exception(
        HttpResponseException.class, (e, ctx) -> write(ctx, e.getStatus(), e.getMessage(), null));
    config.routes.exception(
        Exception.class,
        (e, ctx) -> {
          log.error("request {} {} failed", ctx.method(), ctx.path(), e);
          write(
              ctx,
              500,
              "internal error; the server log has the details under this request id",
              null);
        });
    config.routes.error(
        404,
        ctx -> {
          if (!isProblem(ctx)) {
            write(ctx, 404, "no route for " + ctx.method() + " " + ctx.path(), null);
          }
        });
    config.routes.error(
        405,
        ctx -> {
          if (!isProblem(ctx)) {
            write(ctx, 405, "method " + ctx.method() + " is not allowed on " + ctx.path(), null);
          }
        });
  }

  private static boolean isProblem(Context ctx) {
    String type = ctx.res().getContentType();
    return type != null && type.startsWith("application/problem+json");
  }

  static void database(Context ctx, DatabaseException e) {
    int status = e.status();
    if (status == 503) {
      log.warn("database unavailable for {} {}: {}", ctx.method(), ctx.path(), e.getMessage());
      write(ctx, 503, "the database is unavailable; retry shortly", null);
      return;
    }
    if (status == 500) {
      log.error("request {} {} failed in the database", ctx.method(), ctx.path(), e);
      write(ctx, 500, "internal error; the server log has the details under this request id", null);
      return;
    }
    write(ctx, status, e.serverMessage(), null);
  }

  public static void write(Context ctx, int status, String detail, String field) {
    Problem p =
        new Problem(
            "about:blank",
            title(status),
            status,
            detail,
            field,
            ctx.attribute(RequestIds.ATTRIBUTE));
    JsonBodies.respond(ctx, status, p);
    ctx.contentType("application/problem+json");
  }

  static String title(int status) {
    return switch (status) {
      case 400 -> "Bad Request";
      case 401 -> "Unauthorized";
      case 403 -> "Forbidden";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 408 -> "Request Timeout";
      case 409 -> "Conflict";
      case 413 -> "Content Too Large";
      case 415 -> "Unsupported Media Type";
      case 431 -> "Request Header Fields Too Large";
      case 503 -> "Service Unavailable";
      default -> status >= 500 ? "Internal Server Error" : "Error";
    };
  }
}
