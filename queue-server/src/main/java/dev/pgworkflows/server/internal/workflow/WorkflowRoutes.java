package dev.pgworkflows.server.internal.workflow;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.server.internal.db.DatabaseException;
import dev.pgworkflows.server.internal.http.ApiException;
import dev.pgworkflows.server.internal.http.Json;
import dev.pgworkflows.server.internal.http.Params;
import dev.pgworkflows.server.internal.http.Problems;
import dev.pgworkflows.server.internal.tracing.RunTrace;
import dev.pgworkflows.server.internal.tracing.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** The design doc's {@code /v1/workflows} routes: start, list, get, cancel, signal, steps. */
public final class WorkflowRoutes {
  record Start(JsonNode input, Integer version, String idempotencyKey, Integer retentionDays) {}

  /** One item of {@code POST /v1/workflows/{name}/runs/batch}: a start and the caller's trace. */
  record BatchStartItem(
      JsonNode input,
      Integer version,
      String idempotencyKey,
      Integer retentionDays,
      String traceparent) {}

  record StartBatch(List<BatchStartItem> runs) {}

  static final int MAX_BATCH = 100;

  static final Pattern NAME = Pattern.compile("[a-z0-9_][a-z0-9_-]{0,42}");
  private static final Pattern EVENT = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
  private static final Set<String> STATUSES = Set.of("running", "completed", "failed", "cancelled");
  private static final Set<String> LIST_PARAMS =
      Set.of("status", "since", "until", "cursor", "limit");

  private final WorkflowStore store;
  private final HandedStarts handed;
  private final WorkflowEvents events;
  private final Tracing tracing;

  public WorkflowRoutes(
      WorkflowStore store, HandedStarts handed, WorkflowEvents events, Tracing tracing) {
    this.store = store;
    this.handed = handed;
    this.events = events;
    this.tracing = tracing;
  }

  public void register(RoutesConfig routes) {
    routes.get(
        "/v1/workflows", ctx -> Json.respond(ctx, 200, Map.of("workflows", store.summary())));
    routes.post("/v1/workflows/{name}/runs", this::start);
    routes.post("/v1/workflows/{name}/runs/batch", this::startMany);
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

  /** A start whose fields passed the checks, its input as JSON text. */
  record CheckedStart(
      String input, Integer version, String idempotencyKey, Integer retentionDays) {}

  static CheckedStart check(Start req) {
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
    return new CheckedStart(
        req.input() == null ? "null" : Json.write(req.input()),
        req.version(),
        req.idempotencyKey(),
        req.retentionDays());
  }

  private void start(Context ctx) {
    String name = name(ctx);
    Start req =
        ctx.bodyAsBytes().length == 0
            ? new Start(null, null, null, null)
            : Json.body(ctx, Start.class);
    CheckedStart c = check(req);
    RunTrace trace = tracing.newRun(ctx);
    String traceContext = trace == null ? null : trace.encode();
    List<WorkflowStore.Started> given =
        handed.start(name, List.of(new WorkflowStore.BatchStart(c, traceContext)));
    WorkflowStore.Started s = given != null ? given.get(0) : store.start(name, c, traceContext);
    if (s.created()) {
      events.started(name);
    }
    Json.respond(ctx, s.created() ? 201 : 200, s);
  }

  /**
   * Many starts of one workflow in one request. Each item is answered on its own, in order: the
   * answer a single start gives, or {@code rejected} with a status and a detail; one bad item costs
   * only itself. The valid ones start in one transaction; should the database refuse that as a
   * whole, each is started again in its own.
   */
  private void startMany(Context ctx) {
    String name = name(ctx);
    StartBatch req = Json.body(ctx, StartBatch.class);
    if (req.runs() == null || req.runs().isEmpty() || req.runs().size() > MAX_BATCH) {
      throw ApiException.badRequest("runs", "runs must hold 1 to " + MAX_BATCH + " runs");
    }
    int n = req.runs().size();
    List<Map<String, Object>> answers = new ArrayList<>(n);
    List<WorkflowStore.BatchStart> accepted = new ArrayList<>(n);
    List<Integer> at = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      answers.add(null);
      BatchStartItem item = req.runs().get(i);
      try {
        if (item == null) {
          throw ApiException.badRequest("runs", "a run must be an object");
        }
        CheckedStart c =
            check(
                new Start(
                    item.input(), item.version(), item.idempotencyKey(), item.retentionDays()));
        RunTrace trace = tracing.newRun(ctx, item.traceparent());
        accepted.add(new WorkflowStore.BatchStart(c, trace == null ? null : trace.encode()));
        at.add(i);
      } catch (ApiException e) {
        answers.set(i, rejected(e.status(), e.getMessage()));
      }
    }
    if (!accepted.isEmpty()) {
      List<Object> results = startAll(name, accepted);
      for (int k = 0; k < results.size(); k++) {
        Object r = results.get(k);
        if (r instanceof WorkflowStore.Started s) {
          if (s.created()) {
            events.started(name);
          }
          answers.set(
              at.get(k), Map.of("runId", s.runId(), "status", s.status(), "created", s.created()));
        } else {
          @SuppressWarnings("unchecked")
          Map<String, Object> refused = (Map<String, Object>) r;
          answers.set(at.get(k), refused);
        }
      }
    }
    Json.respond(ctx, 200, Map.of("runs", answers));
  }

  /** Started, or a rejection, per item. */
  private List<Object> startAll(String name, List<WorkflowStore.BatchStart> items) {
    try {
      List<WorkflowStore.Started> given = handed.start(name, items);
      if (given != null) {
        return new ArrayList<>(given);
      }
    } catch (DatabaseException e) {
      if (Problems.status(e) >= 500) {
        throw e;
      }
    }
    if (items.size() > 1) {
      try {
        return new ArrayList<>(store.startBatch(name, items));
      } catch (DatabaseException e) {
        if (Problems.status(e) >= 500) {
          throw e;
        }
      }
    }
    List<Object> out = new ArrayList<>(items.size());
    for (WorkflowStore.BatchStart b : items) {
      try {
        out.add(store.start(name, b.start(), b.traceContext()));
      } catch (DatabaseException e) {
        int status = Problems.status(e);
        if (status >= 500) {
          throw e;
        }
        out.add(rejected(status, e.serverMessage()));
      }
    }
    return out;
  }

  static Map<String, Object> rejected(int status, String detail) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("outcome", "rejected");
    body.put("status", status);
    body.put("detail", detail);
    return body;
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
