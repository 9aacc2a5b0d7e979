package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.server.Scope;
import dev.pgworkflows.server.internal.audit.AuditTrail;
import io.javalin.http.Context;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The after hook that puts every operator action a request performed on the audit trail: for each
 * admin route that changes something, its action's name, what it acted on (path parameters) and the
 * fields of its answer worth keeping. Only answers in 2xx are recorded: a refused or failed request
 * changed nothing. The row is written right after the action's own transaction committed and before
 * the answer leaves.
 *
 * <p>Every admin route other than a GET must be here; the server refuses to start otherwise ({@link
 * #requireEvery}), so a new operator action cannot go out unaudited.
 */
public final class OperatorAudit {
  /**
   * An audited route: its action's name, the path parameters that name its target, answer fields.
   */
  private record Audited(String action, List<String> target, List<String> fields) {}

  /**
   * The schedules' changes: who made, changed, paused, resumed, backfilled or deleted which
   * schedule.
   */
  private static final Map<String, Audited> SCHEDULES =
      Map.of(
          "POST /v1/schedules",
          new Audited(
              "schedule.create",
              List.of(),
              List.of("name", "workflow", "cron", "zone", "catchUp", "overlap")),
          "PUT /v1/schedules/{name}",
          new Audited(
              "schedule.update",
              List.of("name"),
              List.of("workflow", "cron", "zone", "catchUp", "overlap")),
          "POST /v1/schedules/{name}/pause",
          new Audited("schedule.pause", List.of("name"), List.of()),
          "POST /v1/schedules/{name}/resume",
          new Audited("schedule.resume", List.of("name"), List.of("nextTick")),
          "POST /v1/schedules/{name}/backfill",
          new Audited("schedule.backfill", List.of("name"), List.of()),
          "DELETE /v1/schedules/{name}",
          new Audited("schedule.delete", List.of("name"), List.of()));

  /** The operator's controls over workflows, runs and queue groups. */
  private static final Map<String, Audited> CONTROLS =
      Map.of(
          "POST /v1/workflows/{name}/pause",
          new Audited("workflow.pause", List.of("name"), List.of()),
          "POST /v1/workflows/{name}/resume",
          new Audited("workflow.resume", List.of("name"), List.of()),
          "POST /v1/workflows/{name}/runs/{runId}/pause",
          new Audited("run.pause", List.of("name", "runId"), List.of()),
          "POST /v1/workflows/{name}/runs/{runId}/resume",
          new Audited("run.resume", List.of("name", "runId"), List.of()),
          "POST /v1/workflows/{name}/runs/{runId}/restart",
          new Audited("run.restart", List.of("name", "runId"), List.of("status")),
          "POST /v1/workflows/{name}/runs/{runId}/fork",
          new Audited("run.fork", List.of("name", "runId"), List.of("runId", "forkedFrom")),
          "POST /v1/queues/{queue}/groups/{group}/pause",
          new Audited("group.pause", List.of("queue", "group"), List.of()),
          "POST /v1/queues/{queue}/groups/{group}/resume",
          new Audited("group.resume", List.of("queue", "group"), List.of()),
          "POST /v1/queues/{queue}/groups/{group}/park",
          new Audited("group.park", List.of("queue", "group"), List.of("id", "messageId")),
          "POST /v1/queues/{queue}/parked/{id}/redrive",
          new Audited("parked.redrive", List.of("queue", "id"), List.of("messageId")));

  /** The routes of both. */
  private static Map<String, Audited> union(Map<String, Audited> a, Map<String, Audited> b) {
    Map<String, Audited> all = new java.util.HashMap<>(a);
    all.putAll(b);
    return Map.copyOf(all);
  }

  /** {@code more} and the routes given as pairs of key and {@link Audited}. */
  private static Map<String, Audited> with(Map<String, Audited> more, Object... pairs) {
    Map<String, Audited> all = new java.util.HashMap<>(more);
    for (int i = 0; i < pairs.length; i += 2) {
      all.put((String) pairs[i], (Audited) pairs[i + 1]);
    }
    return Map.copyOf(all);
  }

  private static final Map<String, Audited> AUDITED =
      with(
          union(SCHEDULES, CONTROLS),
          "PUT /v1/queues/{queue}",
          new Audited(
              "queue.put",
              List.of("queue"),
              List.of("fifo", "visibilityTimeoutSeconds", "maxReceives")),
          "DELETE /v1/queues/{queue}",
          new Audited("queue.delete", List.of("queue"), List.of()),
          "POST /v1/queues/{queue}/purge",
          new Audited("queue.purge", List.of("queue"), List.of("purged")),
          "POST /v1/queues/{queue}/dead-letters/redrive",
          new Audited("queue.redrive", List.of("queue"), List.of("redriven")),
          // Not the url: a webhook's URL may carry credentials.
          "POST /v1/topics/{pattern}/subscriptions",
          new Audited(
              "subscription.create", List.of("pattern"), List.of("id", "type", "name", "signed")),
          "DELETE /v1/topics/{pattern}/subscriptions/{id}",
          new Audited("subscription.delete", List.of("pattern", "id"), List.of()),
          "DELETE /v1/workflows/{name}/runs/{runId}",
          new Audited("run.cancel", List.of("name", "runId"), List.of("status", "cancelled")),
          "PUT /v1/workflows/{name}/concurrency",
          new Audited(
              "workflow.concurrency", List.of("name"), List.of("limit", "strategy", "totalLimit")),
          "PUT /v1/workflows/{name}/throttle",
          new Audited(
              "workflow.throttle",
              List.of("name"),
              List.of("limit", "periodMs", "burst", "perKey")),
          "PUT /v1/workflows/{name}/routing",
          new Audited("workflow.routing", List.of("name"), List.of("require", "prefer", "sticky")),
          "PUT /v1/workflows/{name}/concurrency/{key}",
          new Audited("workflow.concurrency.key", List.of("name", "key"), List.of("limit")),
          "DELETE /v1/workflows/{name}/concurrency/{key}",
          new Audited("workflow.concurrency.key.delete", List.of("name", "key"), List.of()),
          "PUT /v1/rate-limits/{key}",
          new Audited("ratelimit.put", List.of("key"), List.of("limit", "periodMs")),
          "POST /v1/callback-keys",
          new Audited("callbacks.rotate-key", List.of(), List.of("keyId")),
          "PUT /v1/search-attributes/{attribute}",
          new Audited("search_attribute.define", List.of("attribute"), List.of("type", "created")),
          "POST /v1/batches",
          new Audited("batch.create", List.of(), List.of("batchId", "action", "query", "selected")),
          "POST /v1/batches/{batchId}/cancel",
          new Audited("batch.cancel", List.of("batchId"), List.of("status", "done")),
          "POST /v1/workflows/{name}/runs/{runId}/steps/{step}/pause",
          new Audited("step.pause", List.of("name", "runId", "step"), List.of("attempt", "state")),
          "POST /v1/workflows/{name}/runs/{runId}/steps/{step}/resume",
          new Audited("step.resume", List.of("name", "runId", "step"), List.of("attempt", "state")),
          "POST /v1/workflows/{name}/runs/{runId}/steps/{step}/reset",
          new Audited("step.reset", List.of("name", "runId", "step"), List.of("attempt", "state")),
          "PUT /v1/workflows/{name}/runs/{runId}/steps/{step}/options",
          new Audited("step.options", List.of("name", "runId", "step"), List.of("options")));

  /**
   * Every action the audit trail records, in one list: the operator routes' and the change of the
   * token configuration. openapi.yaml ({@code GET /v1/audit}) and docs/operating.md list exactly
   * these (a test holds them to it).
   */
  public static SortedSet<String> actions() {
    SortedSet<String> all = new TreeSet<>();
    AUDITED.values().forEach(a -> all.add(a.action()));
    all.add(AuditTrail.TOKENS_CONFIGURED);
    return Collections.unmodifiableSortedSet(all);
  }

  private final AuditTrail trail;

  public OperatorAudit(AuditTrail trail) {
    this.trail = trail;
  }

  /** Records the request's action, if its route is audited and it succeeded. */
  public void after(Context ctx, String template) {
    int status = ctx.statusCode();
    if (template == null || status < 200 || status >= 300) {
      return;
    }
    Audited audited = AUDITED.get(RouteScopes.key(ctx.method().name(), template));
    if (audited == null) {
      return;
    }
    Map<String, String> params = params(template, ctx.path());
    ObjectNode details = Json.MAPPER.createObjectNode();
    params.forEach(details::put);
    details.put("status", status);
    JsonNode answer = audited.fields().isEmpty() ? null : answer(ctx);
    for (String f : audited.fields()) {
      if (answer != null && answer.has(f)) {
        details.set(f, answer.get(f));
      }
    }
    Auth.Caller caller = Auth.caller(ctx);
    trail.performed(
        new AuditTrail.Action(
            caller == null ? AuditTrail.PRESENCE_ONLY : caller.name(),
            audited.action(),
            audited.target().stream().map(params::get).collect(Collectors.joining("/")),
            details,
            ctx.attribute(RequestIds.ATTRIBUTE)));
  }

  /** The JSON answer, read back (Javalin keeps it readable); null when there is none. */
  private static JsonNode answer(Context ctx) {
    try {
      String result = ctx.result();
      return result == null || result.isEmpty() ? null : Json.MAPPER.readTree(result);
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  /**
   * The path parameters of {@code path} under {@code template}, decoded. Taken from the path, as an
   * after hook's own parameters are its own (none), not the route's.
   */
  static Map<String, String> params(String template, String path) {
    String[] t = template.split("/");
    String[] p = path.split("/");
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < t.length && i < p.length; i++) {
      if (t[i].startsWith("{") && t[i].endsWith("}")) {
        out.put(
            t[i].substring(1, t[i].length() - 1),
            URLDecoder.decode(p[i].replace("+", "%2B"), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  /** Throws naming every admin route, other than a GET, that is not audited. */
  public static void requireEvery(List<String> routes) {
    List<String> unaudited =
        routes.stream()
            .filter(r -> !r.startsWith("GET "))
            .filter(
                r -> {
                  String[] mt = r.split(" ", 2);
                  return RouteScopes.of(mt[0], mt[1]).orElse(null) == Scope.ADMIN;
                })
            .filter(r -> !AUDITED.containsKey(r))
            .toList();
    if (!unaudited.isEmpty()) {
      throw new IllegalStateException(
          "admin routes without an audit action (add them to OperatorAudit): " + unaudited);
    }
  }
}
