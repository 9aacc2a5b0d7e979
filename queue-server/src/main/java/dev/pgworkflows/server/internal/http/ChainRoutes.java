package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.runtime.RunEnds;
import dev.pgworkflows.engine.internal.runtime.SlotReport;
import dev.pgworkflows.engine.internal.runtime.TaskStreams;
import dev.pgworkflows.engine.internal.runtime.WorkflowEvents;
import dev.pgworkflows.engine.internal.store.ChainStore;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.telemetry.RunTrace;
import dev.pgworkflows.protocol.ContinueAsNewOutcome;
import dev.pgworkflows.protocol.ContinueAsNewRequest;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.List;
import java.util.Set;

/**
 * Continue-as-new: a worker ends its run and starts the run's successor in one transaction; and the
 * chain of runs so linked, first to last.
 */
public final class ChainRoutes {
  private static final Set<String> STEP_KINDS = Set.of("run", "sleep", "wait", "child");

  private final ChainStore chains;
  private final RunStore runs;
  private final RunEnds runEnds;
  private final WorkflowEvents events;
  private final TaskStreams streams;
  private final Tracing tracing;

  public ChainRoutes(
      ChainStore chains,
      RunStore runs,
      RunEnds runEnds,
      WorkflowEvents events,
      TaskStreams streams,
      Tracing tracing) {
    this.chains = chains;
    this.runs = runs;
    this.runEnds = runEnds;
    this.events = events;
    this.streams = streams;
    this.tracing = tracing;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/continue-as-new", this::continueAsNew);
    routes.get("/v1/workflows/{name}/runs/{runId}/chain", this::chain);
    routes.get("/v1/workflows/{name}/runs/{runId}/chain/last", this::last);
  }

  private void continueAsNew(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    SlotReport report = SlotReports.parse(ctx.header(SlotReports.HEADER));
    ContinueAsNewRequest req = JsonBodies.read(ctx, ContinueAsNewRequest.class);
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    StepRecord step = step(req.step());
    String input = req.input() == null ? "null" : Json.write(req.input());
    // The run must be of this workflow: its successor is started under the same name.
    runs.get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
    if (req.stepSeconds() != null && (req.stepSeconds() < 0 || req.stepSeconds().isNaN())) {
      throw ApiException.badRequest("stepSeconds", "stepSeconds must be zero or more");
    }
    // The successor's trace: a child of this request's span, as a start's run is of its request.
    RunTrace trace = tracing.newRun(ctx);
    ContinueAsNewOutcome answer =
        chains.continueAsNew(
            runId, msg, receipt, input, step, trace == null ? null : trace.encode());
    if ("ok".equals(answer.outcome())) {
      if (step != null && req.stepSeconds() != null) {
        events.stepCompleted(name, step.name(), req.stepSeconds());
      }
      runs.get(name, runId)
          .ifPresent(
              ended -> {
                Run r = ended.run();
                runEnds.ended(
                    name,
                    runId,
                    r.version(),
                    r.status(),
                    r.startedAt(),
                    r.completedAt(),
                    ended.traceContext());
              });
      events.started(name);
    }
    // The worker is done with the run: its slot is free, whatever the answer.
    streams.apply(name, report, 0);
    JsonBodies.respond(ctx, 200, answer);
  }

  /** The held step a continuation journals, checked as a completion's step is. */
  private static StepRecord step(StepRecord step) {
    if (step == null) {
      return null;
    }
    WorkerChecks.stepName("step.name", step.name());
    if (step.kind() == null || !STEP_KINDS.contains(step.kind())) {
      throw ApiException.badRequest(
          "step.kind", "step.kind must be one of run, sleep, wait and child");
    }
    WorkerChecks.error("step.error", step.error());
    WorkerChecks.state("step.state", step.state());
    return step;
  }

  private void chain(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    int limit = Params.intQuery(ctx, "limit", 100, 1, 1000);
    Long cursor = ctx.queryParam("cursor") == null ? null : Params.longQuery(ctx, "cursor", 0);
    runs.get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
    List<Run> page = chains.chain(runId, cursor, limit);
    String next = page.size() == limit ? Long.toString(page.get(page.size() - 1).runId()) : null;
    JsonBodies.respond(ctx, 200, new RunPage(page, next));
  }

  /** The chain's last run: the one running while the chain goes on, and its result at the end. */
  private void last(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    runs.get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
    JsonBodies.respond(ctx, 200, chains.last(runId));
  }
}
