package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.runtime.Retries;
import dev.pgworkflows.engine.internal.runtime.SlotReport;
import dev.pgworkflows.engine.internal.runtime.TaskStreams;
import dev.pgworkflows.engine.internal.store.TaskStore;
import dev.pgworkflows.protocol.LeaseExtended;
import dev.pgworkflows.protocol.LeaseRequest;
import dev.pgworkflows.protocol.RetryOutcome;
import dev.pgworkflows.protocol.RetryRequest;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/** A worker's hold on a task: hand it back to be due later, or extend the lease on it. */
public final class LeaseRoutes {
  private final Retries retries;
  private final TaskStore store;
  private final TaskStreams streams;

  public LeaseRoutes(Retries retries, TaskStore store, TaskStreams streams) {
    this.retries = retries;
    this.store = store;
    this.streams = streams;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/retry", this::retry);
    routes.post("/v1/workflows/{name}/runs/{runId}/lease", this::lease);
  }

  private void retry(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    SlotReport report = SlotReports.parse(ctx.header(SlotReports.HEADER));
    RetryRequest req = JsonBodies.read(ctx, RetryRequest.class);
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    long delayMs = WorkerChecks.delayMs("delayMs", req.delayMs());
    String outcome = retries.retry(name, runId, msg, receipt, delayMs, req.step());
    streams.apply(name, report, 0);
    JsonBodies.respond(ctx, 200, new RetryOutcome(outcome));
  }

  private void lease(Context ctx) {
    Params.workflow(ctx);
    long runId = Params.runId(ctx);
    LeaseRequest req = JsonBodies.read(ctx, LeaseRequest.class);
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    int seconds = WorkerChecks.leaseSeconds("leaseSeconds", req.leaseSeconds());
    String next =
        store
            .extendLease(runId, msg, receipt, seconds)
            .orElseThrow(
                () ->
                    ApiException.conflict(
                        "the lease on run "
                            + runId
                            + " was lost (cancelled, finished or expired)"));
    JsonBodies.respond(ctx, 200, new LeaseExtended(next));
  }
}
