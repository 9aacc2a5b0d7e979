package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.runtime.WorkflowEvents;
import dev.pgworkflows.engine.internal.store.NewRun;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.telemetry.RunTrace;
import dev.pgworkflows.protocol.ChildStartRequest;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.StartTiming;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.Set;

/**
 * A worker's step starting a child run: {@code POST /v1/workflows/{name}/runs/{runId}/children}.
 * The child is started once per parent and step, so a replay of the step gets the same child; its
 * end comes back to the parent as the event {@code __child.<childRunId>}. A child may have a
 * concurrency key, a priority and a deadline, as a start may.
 */
public final class ChildRoutes {
  private static final Set<String> ON_PARENT_CANCEL = Set.of("cancel", "abandon");

  private final RunStore store;
  private final WorkflowEvents events;
  private final Tracing tracing;

  public ChildRoutes(RunStore store, WorkflowEvents events, Tracing tracing) {
    this.store = store;
    this.events = events;
    this.tracing = tracing;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/children", this::start);
  }

  /** Checks a child's start before any I/O; each failure a 400 naming the field. */
  static NewRun check(ChildStartRequest req) {
    WorkerChecks.stepName("step", req.step());
    if (!Names.isWorkflowName(req.workflow())) {
      throw ApiException.badRequest(
          "workflow",
          "workflow must be a workflow name: 1 to 43 characters of a-z, 0-9, \"_\" and \"-\","
              + " not starting with \"-\"");
    }
    if (req.onParentCancel() != null && !ON_PARENT_CANCEL.contains(req.onParentCancel())) {
      throw ApiException.badRequest(
          "onParentCancel", "onParentCancel must be cancel (the default) or abandon");
    }
    if (req.version() != null) {
      Params.range("version", req.version(), 1, 1, 1_000_000);
    }
    if (req.retentionDays() != null) {
      Params.range("retentionDays", req.retentionDays(), 30, 1, 36500);
    }
    if (req.deadlineMs() != null
        && (req.deadlineMs() < 1 || req.deadlineMs() > StartTimings.MAX_MS)) {
      throw ApiException.badRequest(
          "deadlineMs",
          "deadlineMs must be between 1 and " + StartTimings.MAX_MS + ", got " + req.deadlineMs());
    }
    return new NewRun(
        req.input() == null ? "null" : Json.write(req.input()),
        req.version(),
        null,
        req.retentionDays(),
        null,
        req.deadlineMs() == null
            ? StartTiming.NONE
            : new StartTiming(null, null, null, req.deadlineMs(), null, null),
        FlowChecks.key("concurrencyKey", req.concurrencyKey()),
        FlowChecks.priority(req.priority()));
  }

  private void start(Context ctx) {
    String name = Params.workflow(ctx);
    long parent = Params.runId(ctx);
    ChildStartRequest req = JsonBodies.read(ctx, ChildStartRequest.class);
    NewRun child = check(req);
    if (store.get(name, parent).isEmpty()) {
      throw ApiException.notFound("workflow " + name + " has no run " + parent);
    }
    RunTrace trace = tracing.newRun(ctx);
    StartResult s =
        store.startChild(
            parent,
            req.step(),
            req.workflow(),
            child.traced(trace == null ? null : trace.encode()),
            req.onParentCancel() == null ? "cancel" : req.onParentCancel());
    if (s.created()) {
      events.started(req.workflow());
    }
    JsonBodies.respond(ctx, 200, s);
  }
}
