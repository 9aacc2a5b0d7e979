package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.DatabaseException;
import dev.pgworkflows.engine.internal.store.OperationsStore;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.protocol.ForkRequest;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.RestartRequest;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.WorkflowPause;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/**
 * An operator's controls over workflows and runs: pause and resume a workflow or one run, restart
 * an ended run from a step, fork a run from a step into a new one.
 */
public final class RunControlRoutes {

  private final OperationsStore ops;
  private final RunStore runs;

  public RunControlRoutes(OperationsStore ops, RunStore runs) {
    this.ops = ops;
    this.runs = runs;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/pause", ctx -> pauseWorkflow(ctx, true));
    routes.post("/v1/workflows/{name}/resume", ctx -> pauseWorkflow(ctx, false));
    routes.post("/v1/workflows/{name}/runs/{runId}/pause", ctx -> pauseRun(ctx, true));
    routes.post("/v1/workflows/{name}/runs/{runId}/resume", ctx -> pauseRun(ctx, false));
    routes.post("/v1/workflows/{name}/runs/{runId}/restart", this::restart);
    routes.post("/v1/workflows/{name}/runs/{runId}/fork", this::fork);
  }

  private void pauseWorkflow(Context ctx, boolean paused) {
    String name = Params.workflow(ctx);
    WorkflowPause answer = ops.pauseWorkflow(name, paused);
    JsonBodies.respond(ctx, 200, answer);
  }

  private void pauseRun(Context ctx, boolean paused) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    run(name, runId);
    ops.pauseRun(runId, paused);
    JsonBodies.respond(ctx, 200, run(name, runId));
  }

  private void restart(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    String step = fromStep(JsonBodies.read(ctx, RestartRequest.class).fromStep());
    run(name, runId);
    try {
      ops.restart(runId, step);
    } catch (DatabaseException e) {
      throw onStep(e);
    }
    JsonBodies.respond(ctx, 200, run(name, runId));
  }

  private void fork(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    ForkRequest req = JsonBodies.read(ctx, ForkRequest.class);
    String step = fromStep(req.fromStep());
    JsonNode input = req.input();
    run(name, runId);
    long fork;
    try {
      fork = ops.fork(runId, step, input == null ? null : Json.write(input), input != null);
    } catch (DatabaseException e) {
      throw onStep(e);
    }
    JsonBodies.respond(ctx, 201, run(name, fork));
  }

  private static String fromStep(String step) {
    if (step == null) {
      throw ApiException.badRequest("fromStep", "fromStep is required: the name of a step");
    }
    if (!Names.isStepName(step)) {
      throw ApiException.badRequest(
          "fromStep", "fromStep must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\", \"-\"");
    }
    return step;
  }

  /** A step that is not in the run's journal is a bad fromStep; anything else as it came. */
  private static RuntimeException onStep(DatabaseException e) {
    if ("22023".equals(e.sqlState())) {
      return ApiException.badRequest("fromStep", e.serverMessage());
    }
    return e;
  }

  private Run run(String name, long runId) {
    return runs.get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId))
        .run();
  }
}
