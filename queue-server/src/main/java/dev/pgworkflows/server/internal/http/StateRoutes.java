package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.runtime.LongPoll;
import dev.pgworkflows.engine.internal.runtime.StateWaits;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.store.StateStore;
import dev.pgworkflows.engine.internal.store.StoredRun;
import dev.pgworkflows.protocol.RunStateLimits;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A run's state, read from outside: the whole map, or one key, optionally waiting (a long poll of
 * at most {@code LongPoll.MAX_WAIT}) until it is set or changes past a version. A key not set when
 * the answer goes is {@code "set": false} with 200, as a receive that found nothing answers 200
 * with no messages; an unknown run is a 404.
 */
public final class StateRoutes {
  private final RunStore runs;
  private final StateStore store;
  private final StateWaits waits;

  public StateRoutes(RunStore runs, StateStore store, StateWaits waits) {
    this.runs = runs;
    this.store = store;
    this.waits = waits;
  }

  public void register(RoutesConfig routes) {
    routes.get("/v1/workflows/{name}/runs/{runId}/state", this::all);
    routes.get("/v1/workflows/{name}/runs/{runId}/state/{key}", this::one);
  }

  private StoredRun run(Context ctx, long runId) {
    String name = Params.workflow(ctx);
    return runs.get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
  }

  private void all(Context ctx) {
    long runId = Params.runId(ctx);
    run(ctx, runId);
    List<StateStore.Entry> state = store.state(runId);
    StringBuilder values = new StringBuilder("{");
    StringBuilder versions = new StringBuilder("{");
    for (StateStore.Entry e : state) {
      if (values.length() > 1) {
        values.append(',');
        versions.append(',');
      }
      // Keys are of [a-zA-Z0-9._-]: nothing in them needs escaping.
      values.append('"').append(e.key()).append("\":").append(e.value());
      versions.append('"').append(e.key()).append("\":").append(e.version());
    }
    respond(
        ctx, "{\"runId\":" + runId + ",\"state\":" + values + "},\"versions\":" + versions + "}}");
  }

  private void one(Context ctx) {
    long runId = Params.runId(ctx);
    String key = ctx.pathParam("key");
    String problem = RunStateLimits.keyProblem("key", key);
    if (problem != null) {
      throw ApiException.badRequest("key", problem);
    }
    int wait = Params.intQuery(ctx, "waitSeconds", 0, 0, (int) LongPoll.MAX_WAIT.toSeconds());
    long after =
        ctx.queryParam("afterVersion") == null ? 0 : Params.longQuery(ctx, "afterVersion", 0);
    if (after < 0) {
      throw ApiException.badRequest("afterVersion", "afterVersion must be zero or positive");
    }
    StoredRun run = run(ctx, runId);
    Optional<StateStore.Entry> now = find(store.state(runId), key, after);
    boolean running = "running".equals(run.run().status());
    // A run that has ended journals nothing more: waiting for it would only run out.
    if (now.isPresent() || wait == 0 || !running) {
      respond(ctx, answer(runId, key, now, running));
      return;
    }
    CompletableFuture<StateWaits.Answer> waiting =
        waits.await(runId, key, after, Duration.ofSeconds(wait));
    if (waiting == null) {
      throw new ApiException(
          503,
          "this server has "
              + StateWaits.MAX_WAITS
              + " requests waiting for state already; read without waiting, or try again later");
    }
    ctx.future(
        () -> waiting.thenAccept(a -> respond(ctx, answer(runId, key, a.entry(), a.running()))));
  }

  private static Optional<StateStore.Entry> find(
      List<StateStore.Entry> state, String key, long after) {
    return state.stream().filter(e -> e.key().equals(key) && e.version() > after).findFirst();
  }

  /**
   * The key's answer; {@code running}: whether the run was running when the request came, or when a
   * wait last read it.
   */
  private static String answer(
      long runId, String key, Optional<StateStore.Entry> e, boolean running) {
    String head =
        "{\"runId\":" + runId + ",\"key\":\"" + key + "\",\"running\":" + running + ",\"set\":";
    return e.map(x -> head + "true,\"version\":" + x.version() + ",\"value\":" + x.value() + "}")
        .orElse(head + "false}");
  }

  private static void respond(Context ctx, String json) {
    ctx.status(200).contentType("application/json").result(json);
  }
}
