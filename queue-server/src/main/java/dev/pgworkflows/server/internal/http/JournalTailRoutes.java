package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * {@code GET /v1/workflows/{name}/runs/{runId}/journal-tail}: the journal rows a worker that keeps
 * its runs' journals lacks, for a task whose journal was withheld ({@code journalMax}).
 */
public final class JournalTailRoutes {
  private final WorkerCalls calls;

  public JournalTailRoutes(WorkerCalls calls) {
    this.calls = calls;
  }

  public void register(RoutesConfig routes) {
    routes.get("/v1/workflows/{name}/runs/{runId}/journal-tail", this::tail);
  }

  private void tail(Context ctx) {
    Params.workflow(ctx);
    long runId = Params.runId(ctx);
    String seq = ctx.queryParam("afterSeq");
    String at = ctx.queryParam("afterCompletedAt");
    if ((seq == null) != (at == null)) {
      throw ApiException.badRequest(
          seq == null ? "afterSeq" : "afterCompletedAt",
          "give both afterSeq and afterCompletedAt, or neither");
    }
    Integer afterSeq =
        seq == null ? null : Params.intQuery(ctx, "afterSeq", 0, 1, Integer.MAX_VALUE);
    Instant afterCompletedAt;
    try {
      afterCompletedAt = at == null ? null : Instant.parse(at);
    } catch (DateTimeParseException e) {
      throw ApiException.badRequest(
          "afterCompletedAt", "afterCompletedAt must be an RFC 3339 date-time in UTC");
    }
    JsonBodies.respond(ctx, 200, calls.journalAfter(runId, afterSeq, afterCompletedAt));
  }
}
