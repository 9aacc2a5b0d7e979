package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.runtime.StreamFollowers;
import dev.pgworkflows.engine.internal.store.RunStreamStore;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One reader following a stream as Server-Sent Events: each entry an event whose {@code id} is its
 * offset (so {@code Last-Event-ID} resumes after it), then an {@code end} event once the stream is
 * closed or its run has ended and every entry was sent. Runs on the request's thread; between reads
 * it waits on {@link StreamFollowers} (a write's notification, or its fallback interval), holding
 * no connection. {@link StreamFollowers} bounds how many follow at once and how long an answer
 * lasts; an answer that ends without an end event is resumed by its client.
 */
final class RunStreamEvents {
  private static final Logger log = LoggerFactory.getLogger(RunStreamEvents.class);

  /** Entries read at a time. */
  private static final int PAGE = 500;

  /** A comment line after this long without an event: keeps proxies from timing the answer out. */
  private static final long KEEP_ALIVE_MS = 15_000;

  private final RunStreamStore store;
  private final StreamFollowers followers;
  private final String name;
  private final long runId;
  private final String stream;

  RunStreamEvents(
      RunStreamStore store, StreamFollowers followers, String name, long runId, String stream) {
    this.store = store;
    this.followers = followers;
    this.name = name;
    this.runId = runId;
    this.stream = stream;
  }

  /**
   * Follows from offset {@code from} until the end, the reader leaves, the server closes or the
   * answer has lasted its time. Answers 503 when this server has its most followers already.
   */
  void follow(Context ctx, long from) throws IOException {
    if (!followers.enter()) {
      throw new ApiException(
          503,
          "this server has "
              + followers.maxOpen()
              + " readers following streams; read pages, or try again later");
    }
    CompletableFuture<Void> next = null;
    try {
      next = followers.next(runId);
      // Read before answering, so an unknown run or a bad parameter is a problem document.
      JsonNode page = RunStreamRoutes.tree(store.read(name, runId, stream, from, PAGE));
      ctx.status(200);
      ctx.res().setContentType("text/event-stream;charset=utf-8");
      // Every event as it is written: nginx passes a response on unbuffered with this header.
      ctx.header("X-Accel-Buffering", "no");
      ctx.header("Cache-Control", "no-store");
      next = send(ctx.res().getOutputStream(), page, from, next);
    } finally {
      if (next != null) {
        followers.drop(runId, next);
      }
      followers.leave();
    }
  }

  /**
   * Sends {@code page} and what follows it; returns the future of the run's next write it holds
   * last, for the caller to drop.
   */
  private CompletableFuture<Void> send(
      OutputStream out, JsonNode page, long from, CompletableFuture<Void> next) {
    long started = System.nanoTime();
    long quietSince = started;
    try {
      out.write(": following\n\n".getBytes(StandardCharsets.UTF_8));
      out.flush();
      while (true) {
        JsonNode entries = page.path("entries");
        for (JsonNode e : entries) {
          send(
              out,
              "id: " + e.get("offset").asLong() + "\ndata: " + Json.MAPPER.writeValueAsString(e));
        }
        if (!entries.isEmpty()) {
          out.flush();
          quietSince = System.nanoTime();
        }
        from = page.path("next").asLong(from);
        if (page.path("end").asBoolean()) {
          String end =
              Json.MAPPER.writeValueAsString(
                  Json.MAPPER
                      .createObjectNode()
                      .put("next", from)
                      .put("runStatus", page.path("runStatus").asText()));
          send(out, "event: end\ndata: " + end);
          out.flush();
          return next;
        }
        long left = followers.maxAnswerMillis() - (System.nanoTime() - started) / 1_000_000;
        if (left <= 0) {
          // The answer has lasted its time: it ends without an end event, and the client
          // resumes with Last-Event-ID (so no follower holds a thread for long).
          return next;
        }
        if (entries.size() < PAGE) {
          if (!followers.await(runId, next, Math.min(KEEP_ALIVE_MS, left))) {
            return next; // the server is closing: the client resumes elsewhere
          }
          if ((System.nanoTime() - quietSince) / 1_000_000 >= KEEP_ALIVE_MS) {
            out.write(":\n\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            quietSince = System.nanoTime();
          }
        } else {
          followers.drop(runId, next);
        }
        next = followers.next(runId);
        page = RunStreamRoutes.tree(store.read(name, runId, stream, from, PAGE));
      }
    } catch (IOException e) {
      log.debug("stream {} of run {} lost its reader: {}", stream, runId, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      // The answer has begun: the reader sees it end without an end event and resumes.
      log.warn("following stream {} of run {} failed: {}", stream, runId, e.toString());
    }
    return next;
  }

  private static void send(OutputStream out, String event) throws IOException {
    out.write((event + "\n\n").getBytes(StandardCharsets.UTF_8));
  }
}
