package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.FlowChecks;
import dev.pgworkflows.engine.internal.checks.StartTimings;
import dev.pgworkflows.engine.internal.json.Json;
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
  private final Tracing tracing;

  public StartRoutes(Starts starts, Tracing tracing) {
    this.starts = starts;
    this.tracing = tracing;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs", this::start);
    routes.post("/v1/workflows/{name}/runs/batch", this::startMany);
  }

  /** Checks a start's fields; the run has no trace yet. */
  static NewRun check(StartRequest req) {
    if (req.version() != null) {
      Params.range("version", req.version(), 1, 1, 1_000_000);
    }
    if (req.retentionDays() != null) {
      Params.range("retentionDays", req.retentionDays(), 30, 1, 36500);
    }
    if (req.idempotencyKey() != null
        && (req.idempotencyKey().isEmpty() || req.idempotencyKey().length() > 255)) {
      throw ApiException.badRequest("idempotencyKey", "idempotencyKey must be 1 to 255 characters");
    }
    return new NewRun(
            req.input() == null ? "null" : Json.write(req.input()),
            req.version(),
            req.idempotencyKey(),
            req.retentionDays(),
            null,
            StartTimings.check(req.timing(), req.idempotencyKey()),
            null,
            null)
        .withFlow(
            FlowChecks.key("concurrencyKey", req.concurrencyKey()),
            FlowChecks.priority(req.priority()));
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
    NewRun run = check(req);
    StartResult s = starts.start(name, run.traced(traceContext(tracing.newRun(ctx))));
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
