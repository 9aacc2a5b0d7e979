package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.protocol.PollRequest;
import dev.pgworkflows.protocol.Tasks;
import dev.pgworkflows.server.internal.engine.LongPoll;
import dev.pgworkflows.server.internal.engine.PollTerms;
import dev.pgworkflows.server.internal.engine.TaskPolls;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;

/** {@code POST /v1/workflows/{name}/tasks/poll}: a worker's long poll for tasks. */
public final class PollRoutes {
  private final TaskPolls polls;

  public PollRoutes(TaskPolls polls) {
    this.polls = polls;
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
    var result = polls.poll(name, new PollTerms(req.versions(), max, lease), wait);
    if (result.isDone() && !result.isCompletedExceptionally()) {
      JsonBodies.respond(ctx, 200, new Tasks(result.join()));
      return;
    }
    ctx.future(() -> result.thenAccept(tasks -> JsonBodies.respond(ctx, 200, new Tasks(tasks))));
  }
}
