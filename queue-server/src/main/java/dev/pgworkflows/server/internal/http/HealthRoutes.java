package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.db.Durability;
import dev.pgworkflows.engine.internal.store.Sql;
import dev.pgworkflows.sql.Migrations;
import dev.pgworkflows.sql.Migrator;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * {@code /healthz} (process up), {@code /readyz} (database, schema, and the database's durability
 * settings), {@code /openapi.yaml}.
 */
public final class HealthRoutes {
  private final Sql sql;
  private final BooleanSupplier listening;
  private final byte[] spec;

  public HealthRoutes(Sql sql, BooleanSupplier listening) {
    this.sql = sql;
    this.listening = listening;
    this.spec = load();
  }

  public void register(RoutesConfig routes) {
    routes.get("/healthz", ctx -> JsonBodies.respond(ctx, 200, Map.of("status", "ok")));
    routes.get("/readyz", this::ready);
    routes.get(
        "/openapi.yaml",
        ctx -> {
          if (spec == null) {
            throw ApiException.notFound("this build carries no openapi.yaml");
          }
          ctx.contentType("application/yaml").result(spec);
        });
  }

  private void ready(Context ctx) {
    int expected = Migrations.latestVersion();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("expectedSchemaVersion", expected);
    body.put("listening", listening.getAsBoolean());
    try (Connection c = sql.dataSource().getConnection()) {
      int actual = Migrator.currentVersion(c);
      body.put("schemaVersion", actual);
      body.put("durability", Durability.read(c).asJson());
      boolean ok = actual == expected;
      body.put("status", ok ? "ready" : "schema version mismatch");
      JsonBodies.respond(ctx, ok ? 200 : 503, body);
    } catch (SQLException | RuntimeException e) {
      body.put("status", "database unreachable: " + e.getMessage());
      JsonBodies.respond(ctx, 503, body);
    }
  }

  private static byte[] load() {
    try (InputStream in =
        HealthRoutes.class.getResourceAsStream("/dev/pgworkflows/server/openapi.yaml")) {
      return in == null ? null : in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
