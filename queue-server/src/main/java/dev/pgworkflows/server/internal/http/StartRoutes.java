package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.runtime.RunCalls;
import dev.pgworkflows.protocol.StartAnswer;
import dev.pgworkflows.protocol.StartBatchAnswers;
import dev.pgworkflows.protocol.StartBatchRequest;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.List;

/** Starting runs: {@code POST /v1/workflows/{name}/runs} and its batch form. */
public final class StartRoutes {
  private final RunCalls calls;
  private final Tracing tracing;

  public StartRoutes(RunCalls calls, Tracing tracing) {
    this.calls = calls;
    this.tracing = tracing;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs", this::start);
    routes.post("/v1/workflows/{name}/runs/batch", this::startMany);
  }

  private void start(Context ctx) {
    String name = Params.workflow(ctx);
    StartRequest req =
        ctx.bodyAsBytes().length == 0
            ? new StartRequest(null, null, null, null)
            : JsonBodies.read(ctx, StartRequest.class);
    StartResult s = calls.start(name, req, tracing.newRun(ctx));
    JsonBodies.respond(ctx, s.created() ? 201 : 200, s);
  }

  /**
   * Many starts of one workflow in one request. Each item is answered on its own, in order: the
   * answer a single start gives, or {@code rejected} with a status and a detail; one bad item costs
   * only itself. The valid ones start in one transaction; should the database refuse that as a
   * whole, each is started again in its own.
   */
  private void startMany(Context ctx) {
    String name = Params.workflow(ctx);
    StartBatchRequest req = JsonBodies.read(ctx, StartBatchRequest.class);
    List<StartAnswer> answers =
        calls.startMany(name, req.runs(), traceparent -> tracing.newRun(ctx, traceparent));
    JsonBodies.respond(ctx, 200, new StartBatchAnswers(answers));
  }
}
