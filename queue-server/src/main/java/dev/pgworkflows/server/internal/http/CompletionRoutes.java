package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.WorkerChecks;
import dev.pgworkflows.engine.internal.runtime.Completions;
import dev.pgworkflows.engine.internal.runtime.SlotReport;
import dev.pgworkflows.engine.internal.runtime.TaskStreams;
import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.engine.internal.store.StepCompletion;
import dev.pgworkflows.protocol.CompleteRequest;
import dev.pgworkflows.protocol.CompletionOutcome;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.InstantSource;

/**
 * Completing steps: one run's ({@code /runs/{runId}/complete}) or many runs' in one request and one
 * transaction ({@code /tasks/complete}), each journaling a step and continuing or ending its run.
 */
public final class CompletionRoutes {
  static final int MAX_BATCH = WorkerCalls.MAX_BATCH;

  private final Completions completions;
  private final WorkerCalls calls;
  private final TaskStreams streams;
  private final InstantSource clock;

  public CompletionRoutes(
      Completions completions, WorkerCalls calls, TaskStreams streams, InstantSource clock) {
    this.completions = completions;
    this.calls = calls;
    this.streams = streams;
    this.clock = clock;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/tasks/complete", this::completeMany);
    routes.post("/v1/workflows/{name}/runs/{runId}/complete", this::complete);
  }

  private void complete(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    SlotReport report = SlotReports.parse(ctx.header(SlotReports.HEADER));
    StepCompletion c = WorkerChecks.completion(runId, JsonBodies.read(ctx, CompleteRequest.class));
    CompletionOutcome done = completions.complete(name, c);
    streams.apply(name, report, 0);
    JsonBodies.respond(ctx, 200, done);
  }

  /**
   * Many completions in one request and one transaction. Each item is answered on its own: an item
   * that does not fit (see {@link CompletionBodies}) or fails the checks of a single completion is
   * rejected with a status and a detail, and the others still go through.
   */
  private void completeMany(Context ctx) {
    String name = Params.workflow(ctx);
    Instant received = clock.instant();
    SlotReport report = SlotReports.parse(ctx.header(SlotReports.HEADER));
    CompletionBodies.Read req = CompletionBodies.read(ctx);
    WorkerCalls.Completed done =
        calls.complete(
            name,
            req.completions(),
            req.refused(),
            req.take(),
            received,
            // A batch that takes tasks takes them as its worker's poll would, when it names one.
            req.take() == null || ctx.header(WorkerHeaders.ID) == null
                ? null
                : WorkerHeaders.of(ctx));
    // The slots that asked and got nothing are free too.
    streams.apply(name, report, done.unfilled());
    JsonBodies.respond(ctx, 200, done.answers());
  }
}
