package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.WorkerChecks;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.store.StepRetryStore;
import dev.pgworkflows.protocol.StepRetry;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/**
 * A run's retrying step and an operator's controls over its retries: where they stand, pause,
 * resume, reset the attempts counted, and set retry options for this run.
 */
public final class StepRetryRoutes {
  private static final String STEP = "/v1/workflows/{name}/runs/{runId}/steps/{step}";

  private final StepRetryStore retries;
  private final RunStore runs;

  public StepRetryRoutes(StepRetryStore retries, RunStore runs) {
    this.retries = retries;
    this.runs = runs;
  }

  public void register(RoutesConfig routes) {
    routes.get(STEP + "/retry", ctx -> answer(ctx, retries.get(runId(ctx), step(ctx))));
    routes.post(STEP + "/pause", ctx -> answer(ctx, retries.pause(runId(ctx), step(ctx), true)));
    routes.post(STEP + "/resume", ctx -> answer(ctx, retries.pause(runId(ctx), step(ctx), false)));
    routes.post(STEP + "/reset", ctx -> answer(ctx, retries.reset(runId(ctx), step(ctx))));
    routes.put(STEP + "/options", this::options);
  }

  private void options(Context ctx) {
    long runId = runId(ctx);
    String step = step(ctx);
    JsonNode body = JsonBodies.tree(JsonBodies.body(ctx));
    if (!body.isObject()) {
      throw ApiException.badRequest(
          null,
          "the body must be an object of retry options (attempts, backoff, baseMs, maxMs,"
              + " timeoutMs)");
    }
    answer(ctx, retries.options(runId, step, Json.write(body)));
  }

  /** The run named by the path, checked to be of the path's workflow (404 otherwise). */
  private long runId(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    if (runs.get(name, runId).isEmpty()) {
      throw ApiException.notFound("workflow " + name + " has no run " + runId);
    }
    return runId;
  }

  private static String step(Context ctx) {
    return WorkerChecks.stepName("step", ctx.pathParam("step"));
  }

  private static void answer(Context ctx, StepRetry retry) {
    JsonBodies.respond(ctx, 200, retry);
  }
}
