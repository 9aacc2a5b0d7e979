package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.runtime.RunCalls;
import dev.pgworkflows.engine.internal.runtime.SlotReport;
import dev.pgworkflows.engine.internal.runtime.TaskStreams;
import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.engine.internal.store.ChainStore;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.protocol.ContinueAsNewOutcome;
import dev.pgworkflows.protocol.ContinueAsNewRequest;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.List;

/**
 * Continue-as-new: a worker ends its run and starts the run's successor in one transaction; and the
 * chain of runs so linked, first to last.
 */
public final class ChainRoutes {

  private final ChainStore chains;
  private final RunStore runs;
  private final WorkerCalls calls;
  private final RunCalls runCalls;
  private final TaskStreams streams;
  private final Tracing tracing;

  public ChainRoutes(
      ChainStore chains,
      RunStore runs,
      WorkerCalls calls,
      RunCalls runCalls,
      TaskStreams streams,
      Tracing tracing) {
    this.runCalls = runCalls;
    this.chains = chains;
    this.runs = runs;
    this.calls = calls;
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
    // The successor's trace: a child of this request's span, as a start's run is of its request.
    ContinueAsNewOutcome answer = calls.continueAsNew(name, runId, req, tracing.newRun(ctx));
    // The worker is done with the run: its slot is free, whatever the answer.
    streams.apply(name, report, 0);
    JsonBodies.respond(ctx, 200, answer);
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
    JsonBodies.respond(ctx, 200, runCalls.chainLast(Params.workflow(ctx), Params.runId(ctx)));
  }
}
