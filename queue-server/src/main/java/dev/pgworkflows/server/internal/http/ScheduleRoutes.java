package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.schedule.Cron;
import dev.pgworkflows.engine.internal.store.ScheduleStore;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.ScheduleRegistration;
import dev.pgworkflows.protocol.ScheduleRequest;
import dev.pgworkflows.protocol.ScheduleState;
import dev.pgworkflows.protocol.Schedules;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code /v1/schedules}: cron schedules the server ticks (create, list, inspect, change, pause,
 * resume, delete), and {@code POST /v1/workflows/{name}/schedules}, where a worker registers the
 * schedules of its workflow's definition (source {@code code}). Next ticks are computed here, on
 * the server's clock; every field is checked before any I/O.
 */
public final class ScheduleRoutes {
  private static final Set<String> CATCH_UP = Set.of("skip", "latest", "all");
  private static final int MAX_REGISTERED = 100;

  private final ScheduleStore store;
  private final InstantSource clock;

  public ScheduleRoutes(ScheduleStore store, InstantSource clock) {
    this.store = store;
    this.clock = clock;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/schedules", this::create);
    routes.get("/v1/schedules", ctx -> JsonBodies.respond(ctx, 200, new Schedules(store.list())));
    routes.get("/v1/schedules/{name}", ctx -> JsonBodies.respond(ctx, 200, existing(ctx)));
    routes.put("/v1/schedules/{name}", this::update);
    routes.post("/v1/schedules/{name}/pause", ctx -> pause(ctx, true));
    routes.post("/v1/schedules/{name}/resume", ctx -> pause(ctx, false));
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
    if (req.schedules() == null) {
      throw ApiException.badRequest("schedules", "schedules is required");
    }
    if (req.schedules().size() > MAX_REGISTERED) {
      throw ApiException.badRequest(
          "schedules", "schedules may hold at most " + MAX_REGISTERED + " schedules");
    }
    List<ScheduleStore.Settings> all = new ArrayList<>();
    for (int i = 0; i < req.schedules().size(); i++) {
      String at = "schedules[" + i + "].";
      ScheduleRequest s = req.schedules().get(i);
      if (s == null) {
        throw ApiException.badRequest("schedules[" + i + "]", "schedules[" + i + "] is null");
      }
      if (s.workflow() != null && !s.workflow().equals(workflow)) {
        throw ApiException.badRequest(
            at + "workflow", at + "workflow must be absent or the path's \"" + workflow + "\"");
      }
      ScheduleStore.Settings checked =
          check(s, s.name() == null ? workflow : s.name(), workflow, at);
      if (all.stream().anyMatch(o -> o.name().equals(checked.name()))) {
        throw ApiException.badRequest(
            at + "name", at + "name \"" + checked.name() + "\" is given twice");
      }
      all.add(checked);
    }
    JsonBodies.respond(ctx, 200, new Schedules(store.register(all)));
  }

  /** Checks a schedule's fields and computes its next tick; each failure a 400 naming the field. */
  private ScheduleStore.Settings check(
      ScheduleRequest req, String name, String workflow, String at) {
    if (!ScheduleRequest.isScheduleName(name)) {
      throw ApiException.badRequest(
          at + "name", at + "name must be 1 to 64 characters of a-z, 0-9, \"_\" and \"-\"");
    }
    if (workflow == null) {
      throw ApiException.badRequest(at + "workflow", at + "workflow is required");
    }
    if (!Names.isWorkflowName(workflow)) {
      throw ApiException.badRequest(
          at + "workflow",
          at
              + "workflow must be a workflow name: 1 to 43 characters of a-z, 0-9, \"_\" and"
              + " \"-\", not starting with \"-\"");
    }
    if (req.cron() == null || req.cron().isBlank()) {
      throw ApiException.badRequest(at + "cron", at + "cron is required, such as \"0 9 * * *\"");
    }
    if (req.cron().length() > 256) {
      throw ApiException.badRequest(at + "cron", at + "cron must be at most 256 characters");
    }
    String zone = req.zone() == null ? "UTC" : req.zone();
    if (zone.isEmpty() || zone.length() > 64) {
      throw ApiException.badRequest(at + "zone", at + "zone must be 1 to 64 characters");
    }
    String catchUp = req.catchUp() == null ? "skip" : req.catchUp();
    if (!CATCH_UP.contains(catchUp)) {
      throw ApiException.badRequest(
          at + "catchUp", at + "catchUp must be skip (the default), latest or all");
    }
    int maxCatchUp = Params.range(at + "maxCatchUp", req.maxCatchUp(), 100, 1, 1000);
    Cron cron;
    try {
      cron = Cron.parse(req.cron(), zone);
    } catch (Cron.Invalid e) {
      throw ApiException.badRequest(
          at + e.field(), at.isEmpty() ? e.getMessage() : at + e.getMessage());
    }
    Instant next =
        cron.next(clock.instant())
            .orElseThrow(
                () ->
                    ApiException.badRequest(
                        at + "cron", at + "cron \"" + req.cron() + "\" never ticks again"));
    String input = req.input() == null || req.input().isNull() ? null : Json.write(req.input());
    return new ScheduleStore.Settings(
        name, workflow, req.cron().strip(), zone, input, catchUp, maxCatchUp, next);
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
