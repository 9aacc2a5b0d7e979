package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.runtime.RunCalls;
import dev.pgworkflows.engine.internal.runtime.Starts;
import dev.pgworkflows.engine.internal.store.NewRun;
import dev.pgworkflows.engine.internal.telemetry.RunTrace;
import dev.pgworkflows.protocol.Rejected;
import dev.pgworkflows.protocol.StartAnswer;
import dev.pgworkflows.protocol.StartBatchAnswers;
import dev.pgworkflows.protocol.StartBatchItem;
import dev.pgworkflows.protocol.StartBatchRequest;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.List;

/** Starting runs: {@code POST /v1/workflows/{name}/runs} and its batch form. */
public final class StartRoutes {
  static final int MAX_BATCH = 100;

  private final Starts starts;
  private final RunCalls calls;
  private final Tracing tracing;

  public StartRoutes(Starts starts, RunCalls calls, Tracing tracing) {
    this.starts = starts;
    this.calls = calls;
    this.tracing = tracing;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs", this::start);
    routes.post("/v1/workflows/{name}/runs/batch", this::startMany);
  }

  /** Checks a start's fields; the run has no trace yet. */
  static NewRun check(StartRequest req) {
    return RunCalls.newRun(req);
  }

  private static String traceContext(RunTrace trace) {
    return trace == null ? null : trace.encode();
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
    if (req.runs() == null || req.runs().isEmpty() || req.runs().size() > MAX_BATCH) {
      throw ApiException.badRequest("runs", "runs must hold 1 to " + MAX_BATCH + " runs");
    }
    int n = req.runs().size();
    List<StartAnswer> answers = new ArrayList<>(n);
    List<NewRun> accepted = new ArrayList<>(n);
    List<Integer> at = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      answers.add(null);
      StartBatchItem item = req.runs().get(i);
      try {
        if (item == null) {
          throw ApiException.badRequest("runs", "a run must be an object");
        }
        NewRun run =
            check(
                new StartRequest(
                        item.input(),
                        item.version(),
                        item.idempotencyKey(),
                        item.retentionDays(),
                        item.timing())
                    .withFlow(item.concurrencyKey(), item.priority()));
        accepted.add(run.traced(traceContext(tracing.newRun(ctx, item.traceparent()))));
        at.add(i);
      } catch (ApiException e) {
        answers.set(i, Rejected.of(e.status(), e.getMessage()));
      }
    }
    if (!accepted.isEmpty()) {
      List<StartAnswer> results = starts.startMany(name, accepted);
      for (int k = 0; k < results.size(); k++) {
        answers.set(at.get(k), results.get(k));
      }
    }
    JsonBodies.respond(ctx, 200, new StartBatchAnswers(answers));
  }
}
