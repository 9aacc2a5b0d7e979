package dev.pgworkflows.server.internal.workflow;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.server.internal.http.ApiException;
import dev.pgworkflows.server.internal.http.Json;
import dev.pgworkflows.server.internal.http.Params;
import dev.pgworkflows.server.internal.tracing.RunTrace;
import dev.pgworkflows.server.internal.tracing.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** The design doc's {@code /v1/workflows} routes: start, list, get, cancel, signal, steps. */
public final class WorkflowRoutes {
  record Start(JsonNode input, Integer version, String idempotencyKey, Integer retentionDays) {}

  static final Pattern NAME = Pattern.compile("[a-z0-9_][a-z0-9_-]{0,42}");
  private static final Pattern EVENT = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
  private static final Set<String> STATUSES = Set.of("running", "completed", "failed", "cancelled");
  private static final Set<String> LIST_PARAMS =
      Set.of("status", "since", "until", "cursor", "limit");

  private final WorkflowStore store;
  private final WorkflowEvents events;
  private final Tracing tracing;

  public WorkflowRoutes(WorkflowStore store, WorkflowEvents events, Tracing tracing) {
    this.store = store;
    this.events = events;
    this.tracing = tracing;
  }

  public void register(RoutesConfig routes) {
    routes.get(
        "/v1/workflows", ctx -> Json.respond(ctx, 200, Map.of("workflows", store.summary())));
    routes.post("/v1/workflows/{name}/runs", this::start);
    routes.get("/v1/workflows/{name}/runs", this::list);
    routes.get("/v1/workflows/{name}/runs/{runId}", this::get);
    routes.delete("/v1/workflows/{name}/runs/{runId}", this::cancel);
    routes.post("/v1/workflows/{name}/runs/{runId}/signals/{event}", this::signal);
    routes.get("/v1/workflows/{name}/runs/{runId}/steps", this::steps);
  }

  static String name(Context ctx) {
    String name = ctx.pathParam("name");
    if (!NAME.matcher(name).matches()) {
      throw ApiException.badRequest(
          "name",
          "workflow name must be 1 to 43 characters of a-z, 0-9, \"_\" and \"-\", not starting"
              + " with \"-\"");
    }
    return name;
  }

  private void start(Context ctx) {
    String name = name(ctx);
    Start req =
        ctx.bodyAsBytes().length == 0
            ? new Start(null, null, null, null)
            : Json.body(ctx, Start.class);
    if (req.version() != null) {
      Params.range("version", req.version(), 1, 1, 1_000_000);
    }
    if (req.retentionDays() != null) {
      Params.range("retentionDays", req.retentionDays(), 30, 1, 36500);
    }
    if (req.idempotencyKey() != null
        && (req.idempotencyKey().isEmpty() || req.idempotencyKey().length() > 255)) {
      throw ApiException.badRequest("idempotencyKey", "idempotencyKey must be 1 to 255 characters");
    }
    String input = req.input() == null ? "null" : Json.write(req.input());
    RunTrace trace = tracing.newRun(ctx);
    WorkflowStore.Started s =
        store.start(
            name,
            input,
            req.version(),
            req.idempotencyKey(),
            req.retentionDays(),
            trace == null ? null : trace.encode());
    if (s.created()) {
      events.started(name);
    }
    Json.respond(
        ctx,
        s.created() ? 201 : 200,
        Map.of("runId", s.runId(), "status", s.status(), "created", s.created()));
  }

  private void list(Context ctx) {
    String name = name(ctx);
    String status = ctx.queryParam("status");
    if (status != null && !STATUSES.contains(status)) {
      throw ApiException.badRequest("status", "status must be one of " + STATUSES);
    }
    int limit = Params.intQuery(ctx, "limit", 50, 1, 1000);
    Long cursor = ctx.queryParam("cursor") == null ? null : Params.longQuery(ctx, "cursor", 0);
    String input = inputFilter(ctx.queryParamMap());
    List<RunView> runs =
        store.list(
            name, status, instant(ctx, "since"), instant(ctx, "until"), input, cursor, limit);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("runs", runs);
    if (runs.size() == limit) {
      body.put("nextCursor", Long.toString(runs.get(runs.size() - 1).runId()));
    }
    Json.respond(ctx, 200, body);
  }

  /**
   * Builds the containment document for {@code input.<path>=<value>} parameters: {@code
   * input.user.id=42} becomes {@code {"user":{"id":42}}}. A value that parses as a JSON scalar is
   * taken as one; anything else is a string. The document is a bound parameter, never SQL text.
   */
  static String inputFilter(Map<String, List<String>> params) {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    boolean any = false;
    for (Map.Entry<String, List<String>> e : params.entrySet()) {
      String key = e.getKey();
      if (LIST_PARAMS.contains(key)) {
        continue;
      }
      if (!key.startsWith("input.") || key.length() == 6) {
        throw ApiException.badRequest(key, "unknown query parameter \"" + key + "\"");
      }
      String[] path = key.substring(6).split("\\.", -1);
      if (path.length > 16) {
        throw ApiException.badRequest(key, "input paths may have at most 16 segments");
      }
      ObjectNode node = root;
      for (int i = 0; i < path.length - 1; i++) {
        if (path[i].isEmpty()) {
          throw ApiException.badRequest(key, "input path segments must not be empty");
        }
        JsonNode child = node.get(path[i]);
        node = child instanceof ObjectNode o ? o : node.putObject(path[i]);
      }
      String leaf = path[path.length - 1];
      if (leaf.isEmpty()) {
        throw ApiException.badRequest(key, "input path segments must not be empty");
      }
      node.set(leaf, scalar(e.getValue().get(0)));
      any = true;
    }
    return any ? Json.write(root) : null;
  }

  private static JsonNode scalar(String raw) {
    try {
      JsonNode n = Json.MAPPER.readTree(raw);
      if (n != null && n.isValueNode()) {
        return n;
      }
    } catch (java.io.IOException ignored) {
      // not JSON: a plain string
    }
    return JsonNodeFactory.instance.textNode(raw);
  }

  private static Instant instant(Context ctx, String param) {
    String raw = ctx.queryParam(param);
    if (raw == null) {
      return null;
    }
    try {
      if (raw.length() == 10) {
        return java.time.LocalDate.parse(raw).atStartOfDay(java.time.ZoneOffset.UTC).toInstant();
      }
      return java.time.OffsetDateTime.parse(raw).toInstant();
    } catch (DateTimeParseException e) {
      throw ApiException.badRequest(
          param, param + " must be a date (2026-05-01) or an RFC 3339 timestamp");
    }
  }

  static long runId(Context ctx) {
    return Params.longPath(ctx, "runId");
  }

  private RunView run(String name, long runId) {
    return store
        .get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
  }

  private void get(Context ctx) {
    Json.respond(ctx, 200, run(name(ctx), runId(ctx)));
  }

  private void steps(Context ctx) {
    String name = name(ctx);
    long runId = runId(ctx);
    run(name, runId);
    ctx.status(200)
        .contentType("application/json")
        .result("{\"runId\":" + runId + ",\"steps\":" + store.journal(runId) + "}");
  }

  private void cancel(Context ctx) {
    String name = name(ctx);
    long runId = runId(ctx);
    run(name, runId);
    WorkflowStore.Cancelled c = store.cancel(runId);
    if (c.cancelled()) {
      RunView ended = run(name, runId);
      events.finished(
          name,
          "cancelled",
          ended.completedAt() == null
              ? null
              : (ended.completedAt().toEpochMilli() - ended.startedAt().toEpochMilli()) / 1000.0);
      tracing.runEnded(
          RunTrace.decode(ended.traceContext()),
          name,
          ended.version(),
          runId,
          "cancelled",
          ended.startedAt());
    }
    Json.respond(
        ctx, 200, Map.of("runId", runId, "status", c.status(), "cancelled", c.cancelled()));
  }

  private void signal(Context ctx) {
    String name = name(ctx);
    long runId = runId(ctx);
    String event = ctx.pathParam("event");
    if (!EVENT.matcher(event).matches()) {
      throw ApiException.badRequest(
          "event",
          "event must be 1 to 128 characters of A-Z, a-z, 0-9, \".\", \"_\", \":\", \"-\"");
    }
    if (ctx.bodyAsBytes().length == 0) {
      throw ApiException.badRequest(null, "the signal payload is the JSON request body");
    }
    JsonNode payload = Json.body(ctx, JsonNode.class);
    run(name, runId);
    WorkflowStore.Signalled s = store.signal(runId, event, Json.write(payload));
    if (s.delivered()) {
      events.signalled(name, event);
    }
    tracing.signalled(ctx, name, runId, event, s.delivered());
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("runId", runId);
    body.put("delivered", s.delivered());
    body.put("reason", s.reason());
    Json.respond(ctx, 200, body);
  }
}
