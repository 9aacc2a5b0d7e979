package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.runtime.StreamFollowers;
import dev.pgworkflows.engine.internal.runtime.StreamWrites;
import dev.pgworkflows.engine.internal.store.RunStreamStore;
import dev.pgworkflows.protocol.StreamWrite;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.io.IOException;

/**
 * A run's streams of output: workers append entries (each known by its write's identity, so a
 * repeat is skipped), readers page through them as JSON or follow them live as Server-Sent Events.
 */
public final class RunStreamRoutes {
  private final RunStreamStore store;
  private final StreamWrites writes;
  private final StreamFollowers followers;

  public RunStreamRoutes(RunStreamStore store, StreamWrites writes, StreamFollowers followers) {
    this.store = store;
    this.writes = writes;
    this.followers = followers;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/streams/{stream}", this::write);
    routes.get("/v1/workflows/{name}/runs/{runId}/streams/{stream}", this::read);
    routes.get("/v1/workflows/{name}/runs/{runId}/streams", this::list);
  }

  /** The {stream} path parameter: checked here and again in SQL. */
  static String stream(Context ctx) {
    return StreamWrites.streamName(ctx.pathParam("stream"));
  }

  private void write(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    String stream = stream(ctx);
    String answer = writes.write(name, runId, stream, JsonBodies.read(ctx, StreamWrite.class));
    ctx.status(200).contentType("application/json").result(answer);
  }

  private void read(Context ctx) throws IOException {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    String stream = stream(ctx);
    String accept = ctx.header("Accept");
    boolean events = accept != null && accept.contains("text/event-stream");
    long from = Params.longQuery(ctx, "from", 0);
    if (events) {
      Long resumed = lastEventId(ctx);
      if (resumed != null) {
        from = resumed + 1;
      }
      new RunStreamEvents(store, followers, name, runId, stream).follow(ctx, from);
      return;
    }
    int limit = Params.intQuery(ctx, "limit", 100, 1, 1000);
    ctx.status(200)
        .contentType("application/json")
        .result(store.read(name, runId, stream, from, limit));
  }

  /** The Last-Event-ID header of a resuming event stream: the offset of the last entry seen. */
  private static Long lastEventId(Context ctx) {
    String raw = ctx.header("Last-Event-ID");
    if (raw == null || raw.isBlank()) {
      return null;
    }
    try {
      long id = Long.parseLong(raw.trim());
      if (id >= 0) {
        return id;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw ApiException.badRequest(
        "Last-Event-ID",
        "Last-Event-ID must be the offset of an entry (a whole number, 0 or more)");
  }

  private void list(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    ctx.status(200).contentType("application/json").result(store.list(name, runId));
  }

  /** Parses a function's JSON answer. */
  static JsonNode tree(String json) {
    try {
      return Json.MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a stream function answered no JSON", e);
    }
  }
}
