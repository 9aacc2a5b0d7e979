package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.runtime.UpdateCalls;
import dev.pgworkflows.protocol.UpdateAnswers;
import dev.pgworkflows.protocol.UpdateRequest;
import dev.pgworkflows.protocol.UpdateResult;
import dev.pgworkflows.protocol.UpdateTask;
import dev.pgworkflows.protocol.UpdateWithStartRequest;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Updates: a caller sends one to a run and waits for its handler's answer ({@code POST
 * .../updates/{update}}: 200 with the answer, 202 while it is pending), or reads it later ({@code
 * GET .../update-results/{updateId}}); the worker of an update task takes the run's pending updates
 * ({@code POST .../update-task}) and answers them ({@code POST .../update-answers}). An
 * update-with-start ({@code POST /v1/workflows/{name}/update-with-start}) starts the run, or finds
 * the one its start's idempotency key names, and sends the update in one transaction.
 */
public final class UpdateRoutes {
  private final UpdateCalls calls;
  private final Tracing tracing;

  public UpdateRoutes(UpdateCalls calls, Tracing tracing) {
    this.calls = calls;
    this.tracing = tracing;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/updates/{update}", this::send);
    routes.post("/v1/workflows/{name}/update-with-start", this::sendWithStart);
    routes.get("/v1/workflows/{name}/runs/{runId}/updates", this::list);
    routes.get("/v1/workflows/{name}/runs/{runId}/update-results/{updateId}", this::result);
    routes.post("/v1/workflows/{name}/runs/{runId}/update-task", this::take);
    routes.post("/v1/workflows/{name}/runs/{runId}/update-answers", this::answer);
  }

  private void send(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    UpdateRequest req =
        ctx.bodyAsBytes().length == 0
            ? new UpdateRequest(null, null)
            : JsonBodies.read(ctx, UpdateRequest.class);
    answer(
        ctx,
        calls.send(
            name,
            runId,
            ctx.pathParam("update"),
            req.input(),
            ctx.header(RunRoutes.IDEMPOTENCY_KEY),
            RunRoutes.IDEMPOTENCY_KEY,
            req.waitSeconds()));
  }

  private void sendWithStart(Context ctx) {
    String name = Params.workflow(ctx);
    UpdateWithStartRequest req = JsonBodies.read(ctx, UpdateWithStartRequest.class);
    answer(
        ctx,
        calls.sendWithStart(
            name,
            req,
            tracing.newRun(ctx),
            ctx.header(RunRoutes.IDEMPOTENCY_KEY),
            RunRoutes.IDEMPOTENCY_KEY,
            req.waitSeconds()));
  }

  private void result(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    long updateId = Params.longPath(ctx, "updateId");
    Integer wait =
        ctx.queryParam("waitSeconds") == null
            ? null
            : Params.intQuery(ctx, "waitSeconds", 0, 0, UpdateCalls.MAX_WAIT_SECONDS);
    answer(ctx, calls.result(name, runId, updateId, wait));
  }

  private static void answer(Context ctx, CompletableFuture<UpdateResult> result) {
    ctx.future(() -> result.thenAccept(r -> JsonBodies.respond(ctx, r.settled() ? 200 : 202, r)));
  }

  private void list(Context ctx) {
    JsonBodies.respond(
        ctx, 200, Map.of("updates", calls.list(Params.workflow(ctx), Params.runId(ctx))));
  }

  private void take(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    JsonBodies.respond(
        ctx, 200, calls.take(name, runId, JsonBodies.read(ctx, UpdateTask.Request.class)));
  }

  private void answer(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    JsonBodies.respond(
        ctx, 200, calls.answer(name, runId, JsonBodies.read(ctx, UpdateAnswers.class)));
  }
}
