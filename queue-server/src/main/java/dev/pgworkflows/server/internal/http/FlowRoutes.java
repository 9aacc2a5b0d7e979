package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.FlowChecks;
import dev.pgworkflows.engine.internal.runtime.CodeRegistrations;
import dev.pgworkflows.engine.internal.runtime.StickyWorkflows;
import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.engine.internal.store.FlowStore;
import dev.pgworkflows.protocol.CancelOnRules;
import dev.pgworkflows.protocol.ConcurrencyLimit;
import dev.pgworkflows.protocol.KeyConcurrencyLimit;
import dev.pgworkflows.protocol.RateLimit;
import dev.pgworkflows.protocol.RateLimitedRequest;
import dev.pgworkflows.protocol.ThrottleSettings;
import dev.pgworkflows.protocol.WorkerRouting;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/**
 * Flow control: a workflow's concurrency limit per key (set by an operator, or by a worker from its
 * definition), one key's own limit in place of it, a key's rate limit, a worker's report that a
 * step was rate-limited (which holds every run of the run's key back), a workflow's throttle (set
 * by an operator or by a worker from its definition), which workers take its tasks (the same way),
 * and the cancel-on rules a worker sets from its definition.
 */
public final class FlowRoutes {
  private final FlowStore store;
  private final WorkerCalls calls;
  private final CodeRegistrations registrations;
  private final StickyWorkflows sticky;

  public FlowRoutes(
      FlowStore store, WorkerCalls calls, CodeRegistrations registrations, StickyWorkflows sticky) {
    this.store = store;
    this.calls = calls;
    this.registrations = registrations;
    this.sticky = sticky;
  }

  public void register(RoutesConfig routes) {
    routes.get("/v1/workflows/{name}/concurrency", this::concurrency);
    routes.put("/v1/workflows/{name}/concurrency", this::setConcurrency);
    routes.put("/v1/workflows/{name}/code-concurrency", this::setCodeConcurrency);
    routes.get("/v1/workflows/{name}/throttle", this::throttle);
    routes.put("/v1/workflows/{name}/throttle", this::setThrottle);
    routes.put("/v1/workflows/{name}/code-throttle", this::setCodeThrottle);
    routes.get("/v1/workflows/{name}/routing", this::routing);
    routes.put("/v1/workflows/{name}/routing", this::setRouting);
    routes.put("/v1/workflows/{name}/code-routing", this::setCodeRouting);
    routes.get("/v1/workflows/{name}/cancel-on", this::cancelOn);
    routes.put("/v1/workflows/{name}/cancel-on", this::setCancelOn);
    routes.get("/v1/workflows/{name}/concurrency/{key}", this::keyConcurrency);
    routes.put("/v1/workflows/{name}/concurrency/{key}", this::setKeyConcurrency);
    routes.delete("/v1/workflows/{name}/concurrency/{key}", this::removeKeyConcurrency);
    routes.get("/v1/rate-limits/{key}", this::rateLimit);
    routes.put("/v1/rate-limits/{key}", this::setRateLimit);
    routes.post("/v1/workflows/{name}/runs/{runId}/rate-limited", this::rateLimited);
  }

  private void concurrency(Context ctx) {
    String name = Params.workflow(ctx);
    JsonBodies.respond(
        ctx,
        200,
        store
            .concurrencySettings(name)
            .orElse(new ConcurrencyLimit(name, null))
            .of(name, store.keyConcurrencyLimits(name)));
  }

  private void setConcurrency(Context ctx) {
    String name = Params.workflow(ctx);
    ConcurrencyLimit req = FlowChecks.concurrency(JsonBodies.read(ctx, ConcurrencyLimit.class));
    JsonBodies.respond(
        ctx, 200, store.setConcurrencyLimit(name, req).orElse(new ConcurrencyLimit(name, null)));
  }

  private void setCodeConcurrency(Context ctx) {
    String name = Params.workflow(ctx);
    ConcurrencyLimit req = JsonBodies.read(ctx, ConcurrencyLimit.class);
    JsonBodies.respond(ctx, 200, registrations.concurrency(name, req));
  }

  private void throttle(Context ctx) {
    String name = Params.workflow(ctx);
    JsonBodies.respond(
        ctx, 200, store.throttle(name).orElse(new ThrottleSettings(name, null, null, null, null)));
  }

  private void setThrottle(Context ctx) {
    String name = Params.workflow(ctx);
    ThrottleSettings req = FlowChecks.throttle(JsonBodies.read(ctx, ThrottleSettings.class));
    JsonBodies.respond(
        ctx,
        200,
        store.setThrottle(name, req).orElse(new ThrottleSettings(name, null, null, null, null)));
  }

  private void setCodeThrottle(Context ctx) {
    String name = Params.workflow(ctx);
    JsonBodies.respond(
        ctx, 200, registrations.throttle(name, JsonBodies.read(ctx, ThrottleSettings.class)));
  }

  private void routing(Context ctx) {
    String name = Params.workflow(ctx);
    JsonBodies.respond(
        ctx, 200, store.workerRouting(name).orElse(new WorkerRouting(name, null, null, false)));
  }

  private void setRouting(Context ctx) {
    String name = Params.workflow(ctx);
    WorkerRouting req = FlowChecks.routing(JsonBodies.read(ctx, WorkerRouting.class));
    WorkerRouting set =
        store.setWorkerRouting(name, req).orElse(new WorkerRouting(name, null, null, false));
    sticky.refresh();
    JsonBodies.respond(ctx, 200, set);
  }

  private void setCodeRouting(Context ctx) {
    String name = Params.workflow(ctx);
    JsonBodies.respond(
        ctx, 200, registrations.routing(name, JsonBodies.read(ctx, WorkerRouting.class)));
  }

  private void cancelOn(Context ctx) {
    JsonBodies.respond(ctx, 200, registrations.cancelOn(Params.workflow(ctx)));
  }

  private void setCancelOn(Context ctx) {
    String name = Params.workflow(ctx);
    CancelOnRules req = JsonBodies.read(ctx, CancelOnRules.class);
    JsonBodies.respond(ctx, 200, registrations.cancelOn(name, req));
  }

  private void keyConcurrency(Context ctx) {
    String name = Params.workflow(ctx);
    String key = FlowChecks.key("key", ctx.pathParam("key"));
    int limit = store.keyConcurrencyLimit(name, key).orElseThrow(() -> noKeyLimit(name, key));
    JsonBodies.respond(ctx, 200, new KeyConcurrencyLimit(name, key, limit));
  }

  private void setKeyConcurrency(Context ctx) {
    String name = Params.workflow(ctx);
    String key = FlowChecks.key("key", ctx.pathParam("key"));
    KeyConcurrencyLimit req = JsonBodies.read(ctx, KeyConcurrencyLimit.class);
    if (req.limit() == null) {
      throw ApiException.badRequest(
          "limit", "limit is required (DELETE removes the key's own limit)");
    }
    Params.range("limit", req.limit(), 1, 1, 100_000);
    JsonBodies.respond(
        ctx,
        200,
        new KeyConcurrencyLimit(name, key, store.setKeyConcurrencyLimit(name, key, req.limit())));
  }

  private void removeKeyConcurrency(Context ctx) {
    String name = Params.workflow(ctx);
    String key = FlowChecks.key("key", ctx.pathParam("key"));
    if (store.keyConcurrencyLimit(name, key).isEmpty()) {
      throw noKeyLimit(name, key);
    }
    store.setKeyConcurrencyLimit(name, key, null);
    ctx.status(204);
  }

  private static ApiException noKeyLimit(String name, String key) {
    return ApiException.notFound(
        "key " + key + " of workflow " + name + " has no concurrency limit of its own");
  }

  private void rateLimit(Context ctx) {
    String key = FlowChecks.key("key", ctx.pathParam("key"));
    RateLimit limit =
        store
            .rateLimit(key)
            .orElseThrow(() -> ApiException.notFound("key " + key + " has no rate limit"));
    JsonBodies.respond(ctx, 200, limit);
  }

  private void setRateLimit(Context ctx) {
    String key = FlowChecks.key("key", ctx.pathParam("key"));
    RateLimit req = JsonBodies.read(ctx, RateLimit.class);
    if ((req.limit() == null) != (req.periodMs() == null)) {
      throw ApiException.badRequest(
          req.limit() == null ? "limit" : "periodMs", "limit and periodMs go together");
    }
    if (req.limit() != null) {
      Params.range("limit", req.limit(), 1, 1, 1_000_000);
      if (req.periodMs() < 1 || req.periodMs() > WorkerCalls.MAX_RETRY_AFTER_MS) {
        throw ApiException.badRequest(
            "periodMs", "periodMs must be between 1 and " + WorkerCalls.MAX_RETRY_AFTER_MS);
      }
    }
    JsonBodies.respond(ctx, 200, store.setRateLimit(key, req.limit(), req.periodMs()));
  }

  private void rateLimited(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    JsonBodies.respond(
        ctx, 200, calls.rateLimited(name, runId, JsonBodies.read(ctx, RateLimitedRequest.class)));
  }
}
