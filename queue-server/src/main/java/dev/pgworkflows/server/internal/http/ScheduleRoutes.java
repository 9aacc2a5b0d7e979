package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.ScheduleChecks;
import dev.pgworkflows.engine.internal.runtime.Backfills;
import dev.pgworkflows.engine.internal.runtime.CodeRegistrations;
import dev.pgworkflows.engine.internal.schedule.Cron;
import dev.pgworkflows.engine.internal.store.ScheduleStore;
import dev.pgworkflows.protocol.BackfillRequest;
import dev.pgworkflows.protocol.ScheduleRegistration;
import dev.pgworkflows.protocol.ScheduleRequest;
import dev.pgworkflows.protocol.ScheduleState;
import dev.pgworkflows.protocol.Schedules;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.InstantSource;

/**
 * {@code /v1/schedules}: cron schedules the server ticks (create, list, inspect, change, pause,
 * resume, backfill, delete), and {@code POST /v1/workflows/{name}/schedules}, where a worker
 * registers the schedules of its workflow's definition (source {@code code}). Next ticks are
 * computed here, on the server's clock; every field is checked before any I/O.
 */
public final class ScheduleRoutes {
  private final ScheduleStore store;
  private final CodeRegistrations registrations;
  private final Backfills backfills;
  private final InstantSource clock;

  public ScheduleRoutes(
      ScheduleStore store,
      CodeRegistrations registrations,
      Backfills backfills,
      InstantSource clock) {
    this.store = store;
    this.registrations = registrations;
    this.backfills = backfills;
    this.clock = clock;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/schedules", this::create);
    routes.get("/v1/schedules", ctx -> JsonBodies.respond(ctx, 200, new Schedules(store.list())));
    routes.get("/v1/schedules/{name}", ctx -> JsonBodies.respond(ctx, 200, existing(ctx)));
    routes.put("/v1/schedules/{name}", this::update);
    routes.post("/v1/schedules/{name}/pause", ctx -> pause(ctx, true));
    routes.post("/v1/schedules/{name}/resume", ctx -> pause(ctx, false));
    routes.post("/v1/schedules/{name}/backfill", this::backfill);
    routes.delete("/v1/schedules/{name}", this::delete);
    routes.post("/v1/workflows/{name}/schedules", this::registerFromCode);
  }

  private void create(Context ctx) {
    ScheduleRequest req = JsonBodies.read(ctx, ScheduleRequest.class);
    if (req.name() == null) {
      throw ApiException.badRequest("name", "name is required");
    }
    JsonBodies.respond(ctx, 201, store.create(check(req, req.name(), req.workflow(), "")));
  }

  private void update(Context ctx) {
    String name = name(ctx);
    ScheduleRequest req = JsonBodies.read(ctx, ScheduleRequest.class);
    if (req.name() != null && !req.name().equals(name)) {
      throw ApiException.badRequest(
          "name", "name must be absent or the path's \"" + name + "\": a schedule keeps its name");
    }
    String workflow = req.workflow() != null ? req.workflow() : existing(ctx).workflow();
    JsonBodies.respond(ctx, 200, store.update(check(req, name, workflow, "")));
  }

  private void pause(Context ctx, boolean paused) {
    String name = name(ctx);
    Instant next = null;
    if (!paused) {
      ScheduleState s = existing(ctx);
      next = Cron.parse(s.cron(), s.zone()).next(clock.instant()).orElse(null);
    }
    JsonBodies.respond(ctx, 200, store.pause(name, paused, next));
  }

  private void backfill(Context ctx) {
    String name = name(ctx);
    JsonBodies.respond(ctx, 200, backfills.run(name, JsonBodies.read(ctx, BackfillRequest.class)));
  }

  private void delete(Context ctx) {
    String name = name(ctx);
    if (!store.delete(name)) {
      throw missing(name);
    }
    ctx.status(204);
  }

  private void registerFromCode(Context ctx) {
    String workflow = Params.workflow(ctx);
    ScheduleRegistration req = JsonBodies.read(ctx, ScheduleRegistration.class);
    JsonBodies.respond(ctx, 200, new Schedules(registrations.schedules(workflow, req)));
  }

  /** Checks a schedule's fields and computes its next tick; each failure a 400 naming the field. */
  private ScheduleStore.Settings check(
      ScheduleRequest req, String name, String workflow, String at) {
    return ScheduleChecks.check(req, name, workflow, at, clock.instant());
  }

  private static String name(Context ctx) {
    String name = ctx.pathParam("name");
    if (!ScheduleRequest.isScheduleName(name)) {
      throw ApiException.badRequest(
          "name", "schedule name must be 1 to 64 characters of a-z, 0-9, \"_\" and \"-\"");
    }
    return name;
  }

  private ScheduleState existing(Context ctx) {
    String name = name(ctx);
    return store.get(name).orElseThrow(() -> missing(name));
  }

  private static ApiException missing(String name) {
    return ApiException.notFound("schedule \"" + name + "\" does not exist");
  }
}
