package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.protocol.PollRequest;
import dev.pgworkflows.protocol.Task;
import dev.pgworkflows.protocol.Tasks;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** {@code POST /v1/workflows/{name}/tasks/poll}: a worker's long poll for tasks. */
public final class PollRoutes {
  private final WorkerCalls calls;

  public PollRoutes(WorkerCalls calls) {
    this.calls = calls;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/tasks/poll", this::poll);
  }

  private void poll(Context ctx) {
    String name = Params.workflow(ctx);
    PollRequest req = JsonBodies.read(ctx, PollRequest.class);
    CompletableFuture<List<Task>> result = calls.poll(name, req, WorkerHeaders.of(ctx));
    if (result.isDone() && !result.isCompletedExceptionally()) {
      JsonBodies.respond(ctx, 200, new Tasks(result.join()));
      return;
    }
    ctx.future(() -> result.thenAccept(tasks -> JsonBodies.respond(ctx, 200, new Tasks(tasks))));
  }
}
