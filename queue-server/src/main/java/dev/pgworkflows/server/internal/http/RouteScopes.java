package dev.pgworkflows.server.internal.http;

import static dev.pgworkflows.server.Scope.ADMIN;
import static dev.pgworkflows.server.Scope.READ;
import static dev.pgworkflows.server.Scope.START;
import static dev.pgworkflows.server.Scope.WORKER;

import dev.pgworkflows.server.Scope;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The scope each route needs, keyed {@code "METHOD /route/{template}"}, as openapi.yaml's {@code
 * x-scope} says. A route that is neither here nor open is refused to every token, and the server
 * refuses to start with one ({@link #requireEvery}): a new route cannot go out without a scope.
 */
public final class RouteScopes {
  /**
   * Routes anyone may call, without a token: probes, the spec, the Prometheus scrape, and the
   * dashboard's files (its calls to the API carry a token).
   */
  private static final Set<String> OPEN =
      Set.of(
          "GET /healthz",
          "GET /readyz",
          "GET /metrics",
          "GET /openapi.yaml",
          "GET /ui",
          "GET /ui/{asset}",
          // A callback's token is its credential.
          "POST /v1/callbacks/{token}",
          "POST /v1/callbacks/{token}/reject");

  private static final Map<String, Scope> SCOPES =
      Map.ofEntries(
          // Reads.
          Map.entry("GET /v1/queues", READ),
          Map.entry("GET /v1/queues/{queue}", READ),
          Map.entry("GET /v1/queues/{queue}/dead-letters", READ),
          Map.entry("GET /v1/topics/{pattern}/subscriptions", READ),
          Map.entry("GET /v1/subscriptions", READ),
          Map.entry("GET /v1/workflows", READ),
          Map.entry("GET /v1/workflows/{name}/runs", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/steps", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/state", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/state/{key}", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/signals", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/blockers", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/steps/{step}/retry", READ),
          Map.entry("GET /v1/workers", READ),
          Map.entry("GET /v1/schedules", READ),
          Map.entry("GET /v1/schedules/{name}", READ),
          Map.entry("GET /v1/workflows/{name}/concurrency", READ),
          Map.entry("GET /v1/workflows/{name}/throttle", READ),
          Map.entry("GET /v1/workflows/{name}/routing", READ),
          Map.entry("GET /v1/workflows/{name}/concurrency/{key}", READ),
          Map.entry("GET /v1/rate-limits/{key}", READ),
          Map.entry("GET /v1/queues/{queue}/parked", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/streams", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/streams/{stream}", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/chain", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/chain/last", READ),
          Map.entry("GET /v1/runs", READ),
          Map.entry("GET /v1/runs/count", READ),
          Map.entry("GET /v1/search-attributes", READ),
          Map.entry("GET /v1/batches", READ),
          Map.entry("GET /v1/batches/{batchId}", READ),
          Map.entry("GET /v1/batches/{batchId}/runs", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/attributes", READ),
          // What starts or feeds work.
          Map.entry("POST /v1/queues/{queue}/messages", START),
          Map.entry("POST /v1/topics/{topic}/messages", START),
          Map.entry("POST /v1/workflows/{name}/runs", START),
          Map.entry("POST /v1/workflows/{name}/runs/batch", START),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/signals/{event}", START),
          // Consumers: queue receivers and workflow workers.
          Map.entry("POST /v1/queues/{queue}/messages/receive", WORKER),
          Map.entry("POST /v1/queues/{queue}/messages/delete", WORKER),
          Map.entry("DELETE /v1/queues/{queue}/messages/{id}", WORKER),
          Map.entry("POST /v1/queues/{queue}/messages/{id}/visibility", WORKER),
          Map.entry("POST /v1/workflows/{name}/tasks/poll", WORKER),
          Map.entry("POST /v1/workflows/{name}/tasks/stream", WORKER),
          Map.entry("DELETE /v1/workflows/{name}/tasks/stream/{streamId}", WORKER),
          Map.entry("POST /v1/workflows/{name}/tasks/stream/{streamId}/slots", WORKER),
          Map.entry("POST /v1/workflows/{name}/tasks/complete", WORKER),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/complete", WORKER),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/retry", WORKER),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/lease", WORKER),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/children", WORKER),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/steps", WORKER),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/journal-tail", WORKER),
          // A worker registers the schedules of its workflow's definition (source code).
          Map.entry("POST /v1/workflows/{name}/schedules", WORKER),
          // A worker sets the concurrency limit of its workflow's definition.
          Map.entry("PUT /v1/workflows/{name}/code-concurrency", WORKER),
          Map.entry("PUT /v1/workflows/{name}/code-throttle", WORKER),
          Map.entry("PUT /v1/workflows/{name}/code-routing", WORKER),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/route", WORKER),
          Map.entry("GET /v1/workflows/{name}/cancel-on", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/callbacks", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/updates", READ),
          Map.entry("GET /v1/workflows/{name}/runs/{runId}/update-results/{updateId}", READ),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/updates/{update}", START),
          Map.entry("POST /v1/workflows/{name}/update-with-start", START),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/update-task", WORKER),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/update-answers", WORKER),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/callbacks/{callback}", WORKER),
          Map.entry("POST /v1/callback-keys", ADMIN),
          Map.entry("PUT /v1/search-attributes/{attribute}", ADMIN),
          Map.entry("POST /v1/batches", ADMIN),
          Map.entry("POST /v1/batches/{batchId}/cancel", ADMIN),
          Map.entry("PUT /v1/workflows/{name}/cancel-on", WORKER),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/rate-limited", WORKER),
          // Steps and bodies append to their run's streams.
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/streams/{stream}", WORKER),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/continue-as-new", WORKER),
          // A run's body sets its search attributes.
          Map.entry("PUT /v1/workflows/{name}/runs/{runId}/attributes", WORKER),
          // Operator actions (each audited, see OperatorAudit) and the audit trail itself.
          Map.entry("PUT /v1/queues/{queue}", ADMIN),
          Map.entry("DELETE /v1/queues/{queue}", ADMIN),
          Map.entry("POST /v1/queues/{queue}/purge", ADMIN),
          Map.entry("POST /v1/queues/{queue}/dead-letters/redrive", ADMIN),
          Map.entry("POST /v1/topics/{pattern}/subscriptions", ADMIN),
          Map.entry("DELETE /v1/topics/{pattern}/subscriptions/{id}", ADMIN),
          Map.entry("DELETE /v1/workflows/{name}/runs/{runId}", ADMIN),
          Map.entry("POST /v1/schedules", ADMIN),
          Map.entry("PUT /v1/schedules/{name}", ADMIN),
          Map.entry("POST /v1/schedules/{name}/pause", ADMIN),
          Map.entry("POST /v1/schedules/{name}/resume", ADMIN),
          Map.entry("POST /v1/schedules/{name}/backfill", ADMIN),
          Map.entry("DELETE /v1/schedules/{name}", ADMIN),
          Map.entry("PUT /v1/workflows/{name}/concurrency", ADMIN),
          Map.entry("PUT /v1/workflows/{name}/throttle", ADMIN),
          Map.entry("PUT /v1/workflows/{name}/routing", ADMIN),
          Map.entry("PUT /v1/workflows/{name}/concurrency/{key}", ADMIN),
          Map.entry("DELETE /v1/workflows/{name}/concurrency/{key}", ADMIN),
          Map.entry("PUT /v1/rate-limits/{key}", ADMIN),
          Map.entry("POST /v1/workflows/{name}/pause", ADMIN),
          Map.entry("POST /v1/workflows/{name}/resume", ADMIN),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/pause", ADMIN),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/resume", ADMIN),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/restart", ADMIN),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/steps/{step}/pause", ADMIN),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/steps/{step}/resume", ADMIN),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/steps/{step}/reset", ADMIN),
          Map.entry("PUT /v1/workflows/{name}/runs/{runId}/steps/{step}/options", ADMIN),
          Map.entry("POST /v1/workflows/{name}/runs/{runId}/fork", ADMIN),
          Map.entry("POST /v1/queues/{queue}/groups/{group}/pause", ADMIN),
          Map.entry("POST /v1/queues/{queue}/groups/{group}/resume", ADMIN),
          Map.entry("POST /v1/queues/{queue}/groups/{group}/park", ADMIN),
          Map.entry("POST /v1/queues/{queue}/parked/{id}/redrive", ADMIN),
          Map.entry("GET /v1/audit", ADMIN));

  private RouteScopes() {}

  static String key(String method, String template) {
    return method + " " + template;
  }

  /** Whether the route may be called without a token. */
  public static boolean open(String method, String template) {
    return OPEN.contains(key(method, template));
  }

  /** The scope the route needs; empty for an open route or one that has none. */
  public static Optional<Scope> of(String method, String template) {
    return Optional.ofNullable(SCOPES.get(key(method, template)));
  }

  /**
   * Throws naming every route (as {@code "METHOD /template"}) that is neither open nor scoped: the
   * server calls it with its routes before it takes requests.
   */
  public static void requireEvery(List<String> routes) {
    List<String> unscoped =
        routes.stream().filter(r -> !OPEN.contains(r) && !SCOPES.containsKey(r)).toList();
    if (!unscoped.isEmpty()) {
      throw new IllegalStateException(
          "routes without a scope (add them to RouteScopes and openapi.yaml): " + unscoped);
    }
  }
}
