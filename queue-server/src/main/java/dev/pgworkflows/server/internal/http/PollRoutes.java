package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.runtime.LongPoll;
import dev.pgworkflows.engine.internal.runtime.PollTerms;
import dev.pgworkflows.engine.internal.runtime.TaskPolls;
import dev.pgworkflows.engine.internal.runtime.WorkerSightings;
import dev.pgworkflows.protocol.PollRequest;
import dev.pgworkflows.protocol.Task;
import dev.pgworkflows.protocol.Tasks;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** {@code POST /v1/workflows/{name}/tasks/poll}: a worker's long poll for tasks. */
public final class PollRoutes {
  private final TaskPolls polls;
  private final WorkerSightings sightings;

  public PollRoutes(TaskPolls polls, WorkerSightings sightings) {
    this.polls = polls;
    this.sightings = sightings;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/tasks/poll", this::poll);
  }

  private void poll(Context ctx) {
    String name = Params.workflow(ctx);
    PollRequest req = JsonBodies.read(ctx, PollRequest.class);
    WorkerChecks.versions("versions", req.versions());
    int max = Params.range("max", req.max(), 1, 1, 100);
    int wait =
        Params.range("waitSeconds", req.waitSeconds(), 0, 0, (int) LongPoll.MAX_WAIT.toSeconds());
    int lease = WorkerChecks.leaseSeconds("leaseSeconds", req.leaseSeconds());
    WorkerSightings.Sighting seen =
        sightings.begin(name, WorkerHeaders.of(ctx), req.versions(), null, "poll");
    CompletableFuture<List<Task>> result;
    try {
      result = polls.poll(name, new PollTerms(req.versions(), max, lease), wait);
    } catch (RuntimeException e) {
      seen.done();
      throw e;
    }
    if (result.isDone()) {
      seen.done();
      if (!result.isCompletedExceptionally()) {
        JsonBodies.respond(ctx, 200, new Tasks(result.join()));
        return;
      }
    } else {
      result.whenComplete((tasks, e) -> seen.done());
    }
    ctx.future(() -> result.thenAccept(tasks -> JsonBodies.respond(ctx, 200, new Tasks(tasks))));
  }
}
