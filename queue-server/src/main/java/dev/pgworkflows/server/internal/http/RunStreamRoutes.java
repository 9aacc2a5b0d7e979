package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.runtime.StreamFollowers;
import dev.pgworkflows.engine.internal.store.RunStreamStore;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.StreamWrite;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.util.List;

/**
 * A run's streams of output: workers append entries (each known by its write's identity, so a
 * repeat is skipped), readers page through them as JSON or follow them live as Server-Sent Events.
 */
public final class RunStreamRoutes {
  /** The most entries one write may carry. */
  static final int MAX_ENTRIES = 1000;

  /** The largest value of one entry, as JSON bytes. */
  static final int MAX_VALUE_BYTES = 64 * 1024;

  private final RunStreamStore store;
  private final StreamFollowers followers;

  public RunStreamRoutes(RunStreamStore store, StreamFollowers followers) {
    this.store = store;
    this.followers = followers;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/streams/{stream}", this::write);
    routes.get("/v1/workflows/{name}/runs/{runId}/streams/{stream}", this::read);
    routes.get("/v1/workflows/{name}/runs/{runId}/streams", this::list);
  }

  /** The {stream} path parameter: checked here and again in SQL. */
  static String stream(Context ctx) {
    String stream = ctx.pathParam("stream");
    if (!Names.isStreamName(stream)) {
      throw ApiException.badRequest(
          "stream",
          "stream name must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\", not dots alone");
    }
    return stream;
  }

  private void write(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    String stream = stream(ctx);
    StreamWrite body = JsonBodies.read(ctx, StreamWrite.class);
    List<StreamWrite.Entry> entries = body.entries() == null ? List.of() : body.entries();
    if (entries.size() > MAX_ENTRIES) {
      throw ApiException.badRequest(
          "entries", "a write may carry at most " + MAX_ENTRIES + " entries");
    }
    for (int i = 0; i < entries.size(); i++) {
      check(entries.get(i), "entries[" + i + "]");
    }
    String answer;
    try {
      answer =
          store.write(
              name,
              runId,
              stream,
              Json.MAPPER.writeValueAsString(entries),
              Boolean.TRUE.equals(body.close()));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("entries could not be serialised", e);
    }
    ctx.status(200).contentType("application/json").result(answer);
  }

  private static void check(StreamWrite.Entry e, String at) {
    if (e == null) {
      throw ApiException.badRequest(at, at + " must be an object");
    }
    if (e.writer() == null || !(e.writer().isEmpty() || Names.isStepName(e.writer()))) {
      throw ApiException.badRequest(
          at + ".writer", at + ".writer must be \"\" (the workflow body) or a step name");
    }
    if (e.seq() == null || e.seq() < 0) {
      throw ApiException.badRequest(at + ".seq", at + ".seq must be a whole number, 0 or more");
    }
    if (e.value() == null) {
      throw ApiException.badRequest(at + ".value", at + ".value is missing");
    }
    int bytes;
    try {
      bytes = Json.MAPPER.writeValueAsBytes(e.value()).length;
    } catch (JsonProcessingException x) {
      throw ApiException.badRequest(at + ".value", at + ".value could not be read");
    }
    if (bytes > MAX_VALUE_BYTES) {
      throw ApiException.badRequest(
          at + ".value",
          at
              + ".value is "
              + bytes
              + " bytes of JSON; at most "
              + MAX_VALUE_BYTES
              + " are allowed");
    }
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
