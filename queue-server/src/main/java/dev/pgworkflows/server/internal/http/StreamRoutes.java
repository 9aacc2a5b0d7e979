package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.WorkerChecks;
import dev.pgworkflows.engine.internal.runtime.LongPoll;
import dev.pgworkflows.engine.internal.runtime.SlotReport;
import dev.pgworkflows.engine.internal.runtime.StickyWorkflows;
import dev.pgworkflows.engine.internal.runtime.TaskStream;
import dev.pgworkflows.engine.internal.runtime.TaskStreams;
import dev.pgworkflows.engine.internal.runtime.VersionRegistry;
import dev.pgworkflows.engine.internal.runtime.WorkerIdentity;
import dev.pgworkflows.engine.internal.runtime.WorkerSightings;
import dev.pgworkflows.protocol.StreamRequest;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;

/** Task streams: open one, report a worker's slots to it, end it. */
public final class StreamRoutes {
  private final TaskStreams streams;
  private final VersionRegistry versions;
  private final WorkerSightings sightings;
  private final StickyWorkflows sticky;

  public StreamRoutes(
      TaskStreams streams,
      VersionRegistry versions,
      WorkerSightings sightings,
      StickyWorkflows sticky) {
    this.streams = streams;
    this.versions = versions;
    this.sightings = sightings;
    this.sticky = sticky;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/tasks/stream", this::stream);
    routes.delete("/v1/workflows/{name}/tasks/stream/{streamId}", this::endStream);
    routes.post("/v1/workflows/{name}/tasks/stream/{streamId}/slots", this::streamSlots);
  }

  /**
   * Opens a task stream: newline-delimited JSON, first the stream's id, then tasks as they come,
   * for as many as the worker reports free slots, until {@code seconds} have passed. It sends none
   * before the worker's first slot report, which shows that the id reached the worker.
   */
  private void stream(Context ctx) {
    String name = Params.workflow(ctx);
    StreamRequest req = JsonBodies.read(ctx, StreamRequest.class);
    WorkerChecks.versions("versions", req.versions());
    int slots = Params.range("slots", req.slots(), 1, 0, 1000);
    int seconds =
        Params.range("seconds", req.seconds(), 30, 1, (int) LongPoll.MAX_WAIT.toSeconds());
    int lease = WorkerChecks.leaseSeconds("leaseSeconds", req.leaseSeconds());
    Integer journalMax = WorkerChecks.journalMax("journalMax", req.journalMax());
    WorkerIdentity who = WorkerHeaders.of(ctx);
    versions.register(name, req.versions());
    TaskStream s =
        streams.open(
            name, req.versions(), slots, lease, seconds, journalMax, who, sticky.contains(name));
    if (s == null) {
      throw new ApiException(
          503,
          "this server has " + streams.maxOpen() + " task streams open; poll, or try again later");
    }
    WorkerSightings.Sighting seen = sightings.begin(name, who, req.versions(), slots, "stream");
    CompletableFuture<Void> done;
    try {
      ctx.status(200);
      ctx.res().setContentType("application/x-ndjson");
      // Every line as it is written: nginx passes a response on unbuffered with this header.
      ctx.header("X-Accel-Buffering", "no");
      ctx.header("Cache-Control", "no-store");
      done = streams.start(s, ctx.res().getOutputStream());
    } catch (IOException | RuntimeException e) {
      s.end();
      streams.closed(s);
      seen.done();
      throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
    }
    // The request's thread goes back to the pool: the stream is written by shared writers.
    ctx.future(() -> done.whenComplete((v, e) -> seen.done()));
  }

  /** A slot report on its own: the worker's first for a stream lets the stream begin. */
  private void streamSlots(Context ctx) {
    String name = Params.workflow(ctx);
    String id = ctx.pathParam("streamId");
    SlotReport report = SlotReports.parse(ctx.header(SlotReports.HEADER));
    if (report == null || !report.stream().equals(id)) {
      throw ApiException.badRequest(
          SlotReports.HEADER, SlotReports.HEADER + " must be a report for stream " + id);
    }
    if (!streams.apply(name, report, 0)) {
      throw ApiException.notFound("no task stream " + id + " of " + name);
    }
    ctx.status(204);
  }

  /** Ends a stream: the worker closes, so it says goodbye and leaves the workers listing. */
  private void endStream(Context ctx) {
    String name = Params.workflow(ctx);
    WorkerIdentity who = WorkerHeaders.of(ctx);
    if (!streams.end(name, ctx.pathParam("streamId"))) {
      throw ApiException.notFound("no task stream " + ctx.pathParam("streamId") + " of " + name);
    }
    sightings.goodbye(name, who.id());
    ctx.status(204);
  }
}
