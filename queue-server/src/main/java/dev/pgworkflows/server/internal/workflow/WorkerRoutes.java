package dev.pgworkflows.server.internal.workflow;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.server.internal.http.ApiException;
import dev.pgworkflows.server.internal.http.Json;
import dev.pgworkflows.server.internal.http.Params;
import dev.pgworkflows.server.internal.tracing.RunTrace;
import dev.pgworkflows.server.internal.tracing.Tracing;
import dev.pgworkflows.server.internal.wait.LongPoll;
import dev.pgworkflows.server.internal.wait.Timers;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The worker protocol: long-poll for tasks, complete a step (journal + continue or finish + ack in
 * one transaction), retry a step later, and extend a lease while a long step runs.
 */
public final class WorkerRoutes {
  record Poll(List<Integer> versions, Integer max, Integer waitSeconds, Integer leaseSeconds) {}

  record Step(String name, String kind, JsonNode output, JsonNode error, Instant startedAt) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Wait(String step, String event, ObjectNode match) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Next(
      String reason,
      Long delayMs,
      Boolean inline,
      @com.fasterxml.jackson.annotation.JsonProperty("wait") Wait waitFor) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Result(String status, JsonNode output, JsonNode error) {}

  record Complete(
      Long messageId,
      String receipt,
      Step step,
      Next next,
      Result result,
      Integer leaseSeconds,
      Double stepSeconds) {}

  record Retry(Long messageId, String receipt, Long delayMs, String step) {}

  record Lease(Long messageId, String receipt, Integer leaseSeconds) {}

  private static final long REGISTER_EVERY_MS = 60_000;

  private final WorkflowStore store;
  private final LongPoll longPoll;
  private final WorkflowEvents events;
  private final Map<String, Long> registered = new ConcurrentHashMap<>();

  private final Tracing tracing;
  private final Timers timers;

  public WorkerRoutes(
      WorkflowStore store,
      LongPoll longPoll,
      Timers timers,
      WorkflowEvents events,
      Tracing tracing) {
    this.store = store;
    this.longPoll = longPoll;
    this.timers = timers;
    this.events = events;
    this.tracing = tracing;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/tasks/poll", this::poll);
    routes.post("/v1/workflows/{name}/runs/{runId}/complete", this::complete);
    routes.post("/v1/workflows/{name}/runs/{runId}/retry", this::retry);
    routes.post("/v1/workflows/{name}/runs/{runId}/lease", this::lease);
  }

  private void poll(Context ctx) {
    String name = WorkflowRoutes.name(ctx);
    Poll req = Json.body(ctx, Poll.class);
    if (req.versions() == null || req.versions().isEmpty() || req.versions().size() > 16) {
      throw ApiException.badRequest(
          "versions", "versions must list 1 to 16 versions this worker runs");
    }
    for (Integer v : req.versions()) {
      if (v == null || v < 1) {
        throw ApiException.badRequest("versions", "versions must be positive integers");
      }
    }
    int max = Params.range("max", req.max(), 1, 1, 100);
    int wait = Params.range("waitSeconds", req.waitSeconds(), 0, 0, 30);
    int lease = Params.range("leaseSeconds", req.leaseSeconds(), 60, 1, 43200);
    registerVersions(name, req.versions());
    if (wait == 0) {
      Json.respond(ctx, 200, Map.of("tasks", store.poll(name, req.versions(), max, lease)));
      return;
    }
    var result =
        longPoll.poll(
            "__wf_" + name, wait * 1000L, () -> store.poll(name, req.versions(), max, lease));
    if (result.isDone() && !result.isCompletedExceptionally()) {
      Json.respond(ctx, 200, Map.of("tasks", result.join()));
      return;
    }
    ctx.future(() -> result.thenAccept(tasks -> Json.respond(ctx, 200, Map.of("tasks", tasks))));
  }

  private void registerVersions(String name, List<Integer> versions) {
    String key = name + versions;
    long now = System.currentTimeMillis();
    Long last = registered.get(key);
    if (last == null || now - last > REGISTER_EVERY_MS) {
      store.registerVersions(name, versions);
      registered.put(key, now);
    }
  }

  private static long receipt(String raw) {
    if (raw == null) {
      throw ApiException.badRequest("receipt", "receipt is required");
    }
    try {
      return Long.parseLong(raw);
    } catch (NumberFormatException e) {
      throw ApiException.badRequest("receipt", "receipt is not one this server handed out");
    }
  }

  private static long messageId(Long id) {
    if (id == null || id < 1) {
      throw ApiException.badRequest("messageId", "messageId must be a positive integer");
    }
    return id;
  }

  private void complete(Context ctx) {
    String name = WorkflowRoutes.name(ctx);
    long runId = WorkflowRoutes.runId(ctx);
    Complete req = Json.body(ctx, Complete.class);
    long msg = messageId(req.messageId());
    long receipt = receipt(req.receipt());
    if ((req.next() == null) == (req.result() == null)) {
      throw ApiException.badRequest("next", "give exactly one of next and result");
    }
    int lease = Params.range("leaseSeconds", req.leaseSeconds(), 60, 1, 43200);
    Step step = req.step();
    if (step != null && (step.name() == null || step.kind() == null)) {
      throw ApiException.badRequest("step", "a step needs a name and a kind");
    }
    String next = null;
    if (req.next() != null) {
      Next n = req.next();
      if (n.delayMs() != null && (n.delayMs() < 0 || n.delayMs() > 31_536_000_000L)) {
        throw ApiException.badRequest("next.delayMs", "delayMs must be between 0 and one year");
      }
      next = Json.write(n);
    }
    String result = null;
    if (req.result() != null) {
      Result r = req.result();
      if (!"completed".equals(r.status()) && !"failed".equals(r.status())) {
        throw ApiException.badRequest("result.status", "status must be completed or failed");
      }
      if ("failed".equals(r.status()) && r.error() == null) {
        throw ApiException.badRequest("result.error", "a failed result needs an error");
      }
      result = Json.write(r);
    }
    WorkflowStore.Completed c =
        store.complete(
            runId,
            msg,
            receipt,
            step == null ? null : step.name(),
            step == null ? null : step.kind(),
            step == null || step.output() == null ? null : Json.write(step.output()),
            step == null || step.error() == null ? null : Json.write(step.error()),
            step == null ? null : step.startedAt(),
            next,
            result,
            lease);
    if ("ok".equals(c.outcome())) {
      Next n = req.next();
      if (n != null && n.delayMs() != null && n.delayMs() > 0 && n.delayMs() <= 60_000) {
        // A sleep or wait timeout due soon: wake this server's pollers when it is, rather
        // than leaving it to the fallback tick (no NOTIFY is sent for delayed messages).
        timers.wakeAt("__wf_" + name, Instant.now().plusMillis(n.delayMs()));
      }
      if (step != null && req.stepSeconds() != null) {
        events.stepCompleted(name, step.name(), req.stepSeconds());
      }
      if (req.result() != null) {
        store
            .get(name, runId)
            .ifPresent(
                run -> {
                  Double seconds =
                      run.completedAt() == null
                          ? null
                          : (run.completedAt().toEpochMilli() - run.startedAt().toEpochMilli())
                              / 1000.0;
                  events.finished(name, run.status(), seconds);
                  tracing.runEnded(
                      RunTrace.decode(run.traceContext()),
                      name,
                      run.version(),
                      runId,
                      run.status(),
                      run.startedAt());
                });
      }
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("outcome", c.outcome());
    if (c.messageId() != null) {
      body.put("messageId", c.messageId());
    }
    if (c.receipt() != null) {
      body.put("receipt", c.receipt());
    }
    Json.respond(ctx, 200, body);
  }

  private void retry(Context ctx) {
    String name = WorkflowRoutes.name(ctx);
    long runId = WorkflowRoutes.runId(ctx);
    Retry req = Json.body(ctx, Retry.class);
    long msg = messageId(req.messageId());
    long receipt = receipt(req.receipt());
    if (req.delayMs() == null || req.delayMs() < 0 || req.delayMs() > 31_536_000_000L) {
      throw ApiException.badRequest("delayMs", "delayMs must be between 0 and one year");
    }
    String outcome = store.retry(runId, msg, receipt, req.delayMs());
    if ("ok".equals(outcome) && req.step() != null) {
      events.stepRetried(name, req.step());
    }
    Json.respond(ctx, 200, Map.of("outcome", outcome));
  }

  private void lease(Context ctx) {
    WorkflowRoutes.name(ctx);
    long runId = WorkflowRoutes.runId(ctx);
    Lease req = Json.body(ctx, Lease.class);
    long msg = messageId(req.messageId());
    long receipt = receipt(req.receipt());
    int seconds = Params.range("leaseSeconds", req.leaseSeconds(), 60, 1, 43200);
    String next =
        store
            .extendLease(runId, msg, receipt, seconds)
            .orElseThrow(
                () ->
                    ApiException.conflict(
                        "the lease on run "
                            + runId
                            + " was lost (cancelled, finished or expired)"));
    Json.respond(ctx, 200, Map.of("receipt", next));
  }
}
