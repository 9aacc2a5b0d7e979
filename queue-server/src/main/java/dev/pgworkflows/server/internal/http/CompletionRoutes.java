package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.runtime.Completions;
import dev.pgworkflows.engine.internal.runtime.PollTerms;
import dev.pgworkflows.engine.internal.runtime.SlotReport;
import dev.pgworkflows.engine.internal.runtime.TaskStreams;
import dev.pgworkflows.engine.internal.store.StepCompletion;
import dev.pgworkflows.protocol.CompleteRequest;
import dev.pgworkflows.protocol.Completion;
import dev.pgworkflows.protocol.CompletionAnswers;
import dev.pgworkflows.protocol.CompletionOutcome;
import dev.pgworkflows.protocol.Task;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Completing steps: one run's ({@code /runs/{runId}/complete}) or many runs' in one request and one
 * transaction ({@code /tasks/complete}), each journaling a step and continuing or ending its run.
 */
public final class CompletionRoutes {
  static final int MAX_BATCH = 100;

  private final Completions completions;
  private final TaskStreams streams;
  private final InstantSource clock;

  public CompletionRoutes(Completions completions, TaskStreams streams, InstantSource clock) {
    this.completions = completions;
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
    PollTerms take = WorkerChecks.take(req.take());
    int n = req.completions().size();
    List<CompletionOutcome> answers = new ArrayList<>(n);
    List<StepCompletion> accepted = new ArrayList<>(n);
    List<String> traceparents = new ArrayList<>(n);
    List<Integer> at = new ArrayList<>(n);
    Set<Long> runs = new HashSet<>();
    for (int i = 0; i < n; i++) {
      answers.add(null);
      Completion item = req.completions().get(i);
      ApiException unread = req.refused()[i];
      if (unread != null) {
        answers.set(i, CompletionOutcome.rejected(unread.status(), unread.getMessage()));
        continue;
      }
      try {
        if (item == null) {
          throw ApiException.badRequest(
              "completions[" + i + "]", "completions[" + i + "] must be an object, not null");
        }
        if (item.runId() == null || item.runId() < 1) {
          throw ApiException.badRequest(
              "runId",
              "runId "
                  + (item.runId() == null ? "is required: " : "must be ")
                  + "a positive integer");
        }
        if (!runs.add(item.runId())) {
          throw ApiException.badRequest(
              "runId", "run " + item.runId() + " appears more than once in the batch");
        }
        accepted.add(WorkerChecks.completion(item.runId(), WorkerChecks.request(item)));
        traceparents.add(item.traceparent());
        at.add(i);
      } catch (ApiException e) {
        answers.set(i, CompletionOutcome.rejected(e.status(), e.getMessage()));
      }
    }
    if (!accepted.isEmpty()) {
      List<CompletionOutcome> outcomes =
          completions.completeBatch(name, accepted, traceparents, received);
      for (int k = 0; k < outcomes.size(); k++) {
        answers.set(at.get(k), outcomes.get(k));
      }
    }
    if (take == null) {
      streams.apply(name, report, 0);
      JsonBodies.respond(ctx, 200, new CompletionAnswers(answers, null));
      return;
    }
    List<Task> tasks = completions.take(name, take);
    // The slots that asked and got nothing are free too.
    streams.apply(name, report, take.max() - tasks.size());
    JsonBodies.respond(ctx, 200, new CompletionAnswers(answers, tasks));
  }
}
