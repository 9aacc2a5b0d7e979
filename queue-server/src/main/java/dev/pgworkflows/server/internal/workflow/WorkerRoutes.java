package dev.pgworkflows.server.internal.workflow;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.server.internal.db.DatabaseException;
import dev.pgworkflows.server.internal.http.ApiException;
import dev.pgworkflows.server.internal.http.Json;
import dev.pgworkflows.server.internal.http.Params;
import dev.pgworkflows.server.internal.http.Problems;
import dev.pgworkflows.server.internal.tracing.RunTrace;
import dev.pgworkflows.server.internal.tracing.Tracing;
import dev.pgworkflows.server.internal.wait.LongPoll;
import dev.pgworkflows.server.internal.wait.Timers;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker protocol: long-poll for tasks, complete a step (journal + continue or finish + ack in
 * one transaction), retry a step later, and extend a lease while a long step runs.
 */
public final class WorkerRoutes {
  private static final Logger log = LoggerFactory.getLogger(WorkerRoutes.class);

  record Poll(List<Integer> versions, Integer max, Integer waitSeconds, Integer leaseSeconds) {}

  record Stream(List<Integer> versions, Integer slots, Integer seconds, Integer leaseSeconds) {}

  record Step(String name, String kind, JsonNode output, JsonNode error, Instant startedAt) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Wait(String step, String event, ObjectNode match) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Next(
      String reason,
      Long delayMs,
      Boolean inline,
      @com.fasterxml.jackson.annotation.JsonProperty("wait") Wait waitFor,
      Instant until) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Result(String status, JsonNode output, JsonNode error) {}

  record Complete(
      Long messageId,
      String receipt,
      Step step,
      Next next,
      Result result,
      Integer leaseSeconds,
      Double stepSeconds) {}

  /** One completion of a batch: a completion plus the run it is for. */
  record BatchItem(
      Long runId,
      Long messageId,
      String receipt,
      Step step,
      Next next,
      Result result,
      Integer leaseSeconds,
      Double stepSeconds,
      String traceparent) {
    Complete completion() {
      return new Complete(messageId, receipt, step, next, result, leaseSeconds, stepSeconds);
    }
  }

  /**
   * Tasks to lease with a batch of completions, for the worker's slots those completions free (a
   * run that ended or was handed back): as a poll with these terms would, without waiting.
   */
  record Take(List<Integer> versions, Integer max, Integer leaseSeconds) {}

  record Batch(List<BatchItem> completions, Take take) {}

  /** A poll's answer. */
  record Tasks(List<TaskView> tasks) {}

  /**
   * A batch's answer: per completion a {@link WorkflowStore.Completed} or a rejection, and the
   * tasks it took when it asked for some.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Answers(List<Object> results, List<TaskView> tasks) {}

  record Retry(Long messageId, String receipt, Long delayMs, String step) {}

  record Lease(Long messageId, String receipt, Integer leaseSeconds) {}

  /** What a waiting poll takes: runs of these versions, up to {@code max}, leased for so long. */
  record Terms(List<Integer> versions, int max, int leaseSeconds) {}

  private static final long REGISTER_EVERY_MS = 60_000;

  /** The last instant an RFC 3339 date-time can name (four-digit years). */
  private static final Instant LAST_DATE_TIME = Instant.parse("9999-12-31T23:59:59.999999999Z");

  static final int MAX_BATCH = 100;

  private final WorkflowStore store;
  private final LongPoll longPoll;
  private final WorkflowEvents events;
  private final Map<String, Long> registered = new ConcurrentHashMap<>();

  private final Tracing tracing;
  private final Timers timers;
  private final TaskStreams streams;

  public WorkerRoutes(
      WorkflowStore store,
      LongPoll longPoll,
      Timers timers,
      WorkflowEvents events,
      Tracing tracing) {
    this.store = store;
    this.longPoll = longPoll;
    this.timers = timers;
    this.events = events;
    this.tracing = tracing;
    this.streams = new TaskStreams(store, longPoll, timers);
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/tasks/poll", this::poll);
    routes.post("/v1/workflows/{name}/tasks/stream", this::stream);
    routes.delete("/v1/workflows/{name}/tasks/stream/{streamId}", this::endStream);
    routes.post("/v1/workflows/{name}/tasks/stream/{streamId}/slots", this::streamSlots);
    routes.post("/v1/workflows/{name}/tasks/complete", this::completeMany);
    routes.post("/v1/workflows/{name}/runs/{runId}/complete", this::complete);
    routes.post("/v1/workflows/{name}/runs/{runId}/retry", this::retry);
    routes.post("/v1/workflows/{name}/runs/{runId}/lease", this::lease);
  }

  private void poll(Context ctx) {
    String name = WorkflowRoutes.name(ctx);
    Poll req = Json.body(ctx, Poll.class);
    checkVersions("versions", req.versions());
    int max = Params.range("max", req.max(), 1, 1, 100);
    int wait =
        Params.range("waitSeconds", req.waitSeconds(), 0, 0, (int) LongPoll.MAX_WAIT.toSeconds());
    int lease = Params.range("leaseSeconds", req.leaseSeconds(), 60, 1, 43200);
    registerVersions(name, req.versions());
    if (wait == 0) {
      Json.respond(ctx, 200, new Tasks(store.poll(name, req.versions(), max, lease)));
      return;
    }
    var result =
        longPoll.poll(
            "__wf_" + name,
            waitKey(req.versions()),
            new Terms(List.copyOf(req.versions()), max, lease),
            wait * 1000L,
            max,
            () -> store.poll(name, req.versions(), max, lease));
    if (result.isDone() && !result.isCompletedExceptionally()) {
      Json.respond(ctx, 200, new Tasks(result.join()));
      return;
    }
    ctx.future(() -> result.thenAccept(tasks -> Json.respond(ctx, 200, new Tasks(tasks))));
  }

  /** Ends every task stream, so that they close before the server stops. */
  public void endStreams() {
    streams.endAll();
  }

  /**
   * Opens a task stream: newline-delimited JSON, first the stream's id, then tasks as they come,
   * for as many as the worker reports free slots, until {@code seconds} have passed. It sends none
   * before the worker's first slot report, which shows that the id reached the worker.
   */
  private void stream(Context ctx) {
    String name = WorkflowRoutes.name(ctx);
    Stream req = Json.body(ctx, Stream.class);
    checkVersions("versions", req.versions());
    int slots = Params.range("slots", req.slots(), 1, 0, 1000);
    int seconds =
        Params.range("seconds", req.seconds(), 30, 1, (int) LongPoll.MAX_WAIT.toSeconds());
    int lease = Params.range("leaseSeconds", req.leaseSeconds(), 60, 1, 43200);
    registerVersions(name, req.versions());
    TaskStream s = streams.open(name, req.versions(), slots, lease, seconds);
    try {
      ctx.status(200);
      ctx.res().setContentType("application/x-ndjson");
      // Every line as it is written: nginx passes a response on unbuffered with this header.
      ctx.header("X-Accel-Buffering", "no");
      ctx.header("Cache-Control", "no-store");
      s.pump(ctx.res().getOutputStream());
    } catch (IOException e) {
      s.end();
    } finally {
      streams.closed(s);
    }
  }

  /** A slot report on its own: the worker's first for a stream lets the stream begin. */
  private void streamSlots(Context ctx) {
    String name = WorkflowRoutes.name(ctx);
    String id = ctx.pathParam("streamId");
    TaskStreams.Report report = TaskStreams.parse(ctx.header(TaskStreams.HEADER));
    if (report == null || !report.stream().equals(id)) {
      throw ApiException.badRequest(
          TaskStreams.HEADER, TaskStreams.HEADER + " must be a report for stream " + id);
    }
    if (!streams.apply(name, report, 0)) {
      throw ApiException.notFound("no task stream " + id + " of " + name);
    }
    ctx.status(204);
  }

  private void endStream(Context ctx) {
    String name = WorkflowRoutes.name(ctx);
    if (!streams.end(name, ctx.pathParam("streamId"))) {
      throw ApiException.notFound("no task stream " + ctx.pathParam("streamId") + " of " + name);
    }
    ctx.status(204);
  }

  private static void checkVersions(String field, List<Integer> versions) {
    if (versions == null || versions.isEmpty() || versions.size() > 16) {
      throw ApiException.badRequest(field, field + " must list 1 to 16 versions this worker runs");
    }
    for (Integer v : versions) {
      if (v == null || v < 1) {
        throw ApiException.badRequest(field, field + " must be positive integers");
      }
    }
  }

  /** A checked {@link Take}: what it takes, as a poll on these terms would. */
  private static Terms checkTake(Take take) {
    if (take == null) {
      return null;
    }
    checkVersions("take.versions", take.versions());
    return new Terms(
        List.copyOf(take.versions()),
        Params.range("take.max", take.max(), 1, 1, 100),
        Params.range("take.leaseSeconds", take.leaseSeconds(), 60, 1, 43200));
  }

  /**
   * What a waiting poll can take, for passing on a wake-up it could not use: polls that list the
   * same versions in another order take the same runs and are one kind.
   */
  static String waitKey(List<Integer> versions) {
    return new TreeSet<>(versions).toString();
  }

  private void registerVersions(String name, List<Integer> versions) {
    String key = name + versions;
    long now = System.currentTimeMillis();
    Long last = registered.get(key);
    if (last == null || now - last > REGISTER_EVERY_MS) {
      store.registerVersions(name, versions);
      registered.put(key, now);
    }
  }

  private static long receipt(String raw) {
    if (raw == null) {
      throw ApiException.badRequest("receipt", "receipt is required");
    }
    try {
      return Long.parseLong(raw);
    } catch (NumberFormatException e) {
      throw ApiException.badRequest("receipt", "receipt is not one this server handed out");
    }
  }

  private static long messageId(Long id) {
    if (id == null || id < 1) {
      throw ApiException.badRequest("messageId", "messageId must be a positive integer");
    }
    return id;
  }

  /** A completion whose fields were checked, ready for the database. */
  record Checked(
      long runId,
      long messageId,
      long receipt,
      Step step,
      Next next,
      Result result,
      int lease,
      Double stepSeconds) {}

  /** Checks one completion; throws a 400 naming the field at fault. */
  static Checked check(long runId, Complete req) {
    long msg = messageId(req.messageId());
    long receipt = receipt(req.receipt());
    if ((req.next() == null) == (req.result() == null)) {
      throw ApiException.badRequest("next", "give exactly one of next and result");
    }
    int lease = Params.range("leaseSeconds", req.leaseSeconds(), 60, 1, 43200);
    Step step = req.step();
    if (step != null && (step.name() == null || step.kind() == null)) {
      throw ApiException.badRequest("step", "a step needs a name and a kind");
    }
    Next next = req.next();
    if (next != null) {
      if (next.delayMs() != null && (next.delayMs() < 0 || next.delayMs() > 31_536_000_000L)) {
        throw ApiException.badRequest("next.delayMs", "delayMs must be between 0 and one year");
      }
      if (next.until() != null) {
        if (next.delayMs() == null) {
          throw ApiException.badRequest("next.until", "until needs delayMs");
        }
        if (next.until().isAfter(LAST_DATE_TIME)) {
          throw ApiException.badRequest("next.until", "until must be an RFC 3339 date-time");
        }
        next = new Next(next.reason(), delayUntil(next), next.inline(), next.waitFor(), null);
      }
    }
    if (req.result() != null) {
      Result r = req.result();
      if (!"completed".equals(r.status()) && !"failed".equals(r.status())) {
        throw ApiException.badRequest("result.status", "status must be completed or failed");
      }
      if ("failed".equals(r.status()) && r.error() == null) {
        throw ApiException.badRequest("result.error", "a failed result needs an error");
      }
    }
    return new Checked(runId, msg, receipt, step, next, req.result(), lease, req.stepSeconds());
  }

  /**
   * The delay of a continuation whose worker measured it to {@code until} (a sleep's or wait's end
   * by the worker's clock, from when the step was called): what is left of it now, so the time the
   * completion spent on the way does not lengthen the sleep; never more than {@code delayMs} from
   * now and never negative.
   */
  private static long delayUntil(Next n) {
    Instant now = Instant.now();
    if (!n.until().isBefore(now.plusMillis(n.delayMs()))) {
      return n.delayMs();
    }
    return n.until().isAfter(now) ? Duration.between(now, n.until()).toMillis() : 0;
  }

  private void complete(Context ctx) {
    String name = WorkflowRoutes.name(ctx);
    long runId = WorkflowRoutes.runId(ctx);
    TaskStreams.Report report = TaskStreams.parse(ctx.header(TaskStreams.HEADER));
    Checked c = check(runId, Json.body(ctx, Complete.class));
    WorkflowStore.BatchOutcome o = completeOne(c);
    WorkflowStore.Completed done = o.completed();
    if ("ok".equals(done.outcome())) {
      afterStep(name, c);
      if (c.result() != null && o.completedAt() != null) {
        runEnded(name, c, o);
      }
    }
    streams.apply(name, report, 0);
    Json.respond(ctx, 200, done);
  }

  /** One completion; for one that ends its run, with what the run's span and metrics need. */
  private WorkflowStore.BatchOutcome completeOne(Checked c) {
    if (c.result() != null) {
      return store.completeEnded(c);
    }
    return new WorkflowStore.BatchOutcome(store.complete(c), null, null, null, null, null);
  }

  /**
   * Many completions in one request and one transaction (see V005). Each item is answered on its
   * own: a malformed item is rejected with a status and a detail and the others still go through.
   */
  private void completeMany(Context ctx) {
    String name = WorkflowRoutes.name(ctx);
    Instant received = Instant.now();
    TaskStreams.Report report = TaskStreams.parse(ctx.header(TaskStreams.HEADER));
    Batch req = Json.body(ctx, Batch.class);
    if (req.completions() == null
        || req.completions().isEmpty()
        || req.completions().size() > MAX_BATCH) {
      throw ApiException.badRequest(
          "completions", "completions must hold 1 to " + MAX_BATCH + " completions");
    }
    Terms take = checkTake(req.take());
    int n = req.completions().size();
    List<Object> answers = new ArrayList<>(n);
    List<Checked> accepted = new ArrayList<>(n);
    List<Integer> at = new ArrayList<>(n);
    Set<Long> runs = new HashSet<>();
    for (int i = 0; i < n; i++) {
      answers.add(null);
      BatchItem item = req.completions().get(i);
      try {
        if (item == null) {
          throw ApiException.badRequest("completions", "a completion must be an object");
        }
        if (item.runId() == null || item.runId() < 1) {
          throw ApiException.badRequest("runId", "runId must be a positive integer");
        }
        if (!runs.add(item.runId())) {
          throw ApiException.badRequest(
              "runId", "run " + item.runId() + " appears more than once in the batch");
        }
        accepted.add(check(item.runId(), item.completion()));
        at.add(i);
      } catch (ApiException e) {
        answers.set(i, WorkflowRoutes.rejected(e.status(), e.getMessage()));
      }
    }
    if (!accepted.isEmpty()) {
      List<WorkflowStore.BatchOutcome> outcomes = completeAll(name, accepted);
      for (int k = 0; k < accepted.size(); k++) {
        WorkflowStore.BatchOutcome o = outcomes.get(k);
        Checked c = accepted.get(k);
        if (o.rejected() != null) {
          answers.set(at.get(k), o.rejected());
          continue;
        }
        tracing.completed(
            req.completions().get(at.get(k)).traceparent(),
            received,
            name,
            c.runId(),
            c.step() == null ? null : c.step().name(),
            o.completed().outcome());
        if ("ok".equals(o.completed().outcome())) {
          afterStep(name, c);
          if (c.result() != null && o.completedAt() != null) {
            runEnded(name, c, o);
          }
        }
        answers.set(at.get(k), o.completed());
      }
    }
    if (take == null) {
      streams.apply(name, report, 0);
      Json.respond(ctx, 200, new Answers(answers, null));
      return;
    }
    List<TaskView> tasks = taken(name, take);
    // The slots that asked and got nothing are free too.
    streams.apply(name, report, take.max() - tasks.size());
    Json.respond(ctx, 200, new Answers(answers, tasks));
  }

  /**
   * The tasks a batch takes, after its completions committed. A failure here leaves the batch's
   * answers standing: the worker learns of no task, and the poll thread finds any there are.
   */
  private List<TaskView> taken(String name, Terms take) {
    try {
      registerVersions(name, take.versions());
      return store.poll(name, take.versions(), take.max(), take.leaseSeconds());
    } catch (DatabaseException e) {
      if (Problems.status(e) >= 500) {
        log.warn("taking tasks of {} after a batch failed: {}", name, e.getMessage());
      }
      return List.of();
    }
  }

  /**
   * The batch in one transaction; when the database refuses it as a whole (an item it finds
   * malformed), each item again in its own transaction, so one bad item costs only itself. A run
   * that does not exist is {@code not_found} either way.
   */
  private List<WorkflowStore.BatchOutcome> completeAll(String name, List<Checked> items) {
    // A lone completion takes the single-run function: the same semantics, and cheaper than the
    // set-based statements when there is nothing to share them with.
    if (items.size() > 1) {
      try {
        return store.completeBatch(name, items);
      } catch (DatabaseException e) {
        if (Problems.status(e) >= 500) {
          throw e;
        }
      }
    }
    List<WorkflowStore.BatchOutcome> out = new ArrayList<>(items.size());
    for (Checked c : items) {
      try {
        out.add(completeOne(c));
      } catch (DatabaseException e) {
        int status = Problems.status(e);
        if (status >= 500) {
          throw e;
        }
        if ("P0002".equals(e.sqlState()) && e.serverMessage().startsWith("workflow run ")) {
          out.add(
              new WorkflowStore.BatchOutcome(
                  new WorkflowStore.Completed("not_found", null, null),
                  null,
                  null,
                  null,
                  null,
                  null));
          continue;
        }
        out.add(
            new WorkflowStore.BatchOutcome(
                null, WorkflowRoutes.rejected(status, e.serverMessage()), null, null, null, null));
      }
    }
    return out;
  }

  /** What follows an accepted step: a timer for a short sleep, and the step metric. */
  private void afterStep(String name, Checked c) {
    Next n = c.next();
    if (n != null && n.delayMs() != null && n.delayMs() > 0 && n.delayMs() <= 60_000) {
      // A sleep or wait timeout due soon: wake this server's pollers when it is, rather
      // than leaving it to the fallback tick (no NOTIFY is sent for delayed messages).
      timers.wakeAt("__wf_" + name, Instant.now().plusMillis(n.delayMs()));
    }
    if (c.step() != null && c.stepSeconds() != null) {
      events.stepCompleted(name, c.step().name(), c.stepSeconds());
    }
  }

  /** The metrics and span of a run that {@code c} ended, as {@code o} reports it. */
  private void runEnded(String name, Checked c, WorkflowStore.BatchOutcome o) {
    Instant startedAt = o.startedAt();
    Double seconds =
        startedAt == null
            ? null
            : (o.completedAt().toEpochMilli() - startedAt.toEpochMilli()) / 1000.0;
    String status = c.result().status();
    events.finished(name, status, seconds);
    tracing.runEnded(
        RunTrace.decode(o.traceContext()), name, o.version(), c.runId(), status, startedAt);
  }

  private void retry(Context ctx) {
    String name = WorkflowRoutes.name(ctx);
    long runId = WorkflowRoutes.runId(ctx);
    TaskStreams.Report report = TaskStreams.parse(ctx.header(TaskStreams.HEADER));
    Retry req = Json.body(ctx, Retry.class);
    long msg = messageId(req.messageId());
    long receipt = receipt(req.receipt());
    if (req.delayMs() == null || req.delayMs() < 0 || req.delayMs() > 31_536_000_000L) {
      throw ApiException.badRequest("delayMs", "delayMs must be between 0 and one year");
    }
    String outcome = store.retry(runId, msg, receipt, req.delayMs());
    if ("ok".equals(outcome) && req.delayMs() <= 60_000) {
      // The task is due again soon (at once, for a task handed back): wake this server's
      // pollers then, as after a short sleep (a retry sends no NOTIFY).
      timers.wakeAt("__wf_" + name, Instant.now().plusMillis(req.delayMs()));
    }
    if ("ok".equals(outcome) && req.step() != null) {
      events.stepRetried(name, req.step());
    }
    streams.apply(name, report, 0);
    Json.respond(ctx, 200, Map.of("outcome", outcome));
  }

  private void lease(Context ctx) {
    WorkflowRoutes.name(ctx);
    long runId = WorkflowRoutes.runId(ctx);
    Lease req = Json.body(ctx, Lease.class);
    long msg = messageId(req.messageId());
    long receipt = receipt(req.receipt());
    int seconds = Params.range("leaseSeconds", req.leaseSeconds(), 60, 1, 43200);
    String next =
        store
            .extendLease(runId, msg, receipt, seconds)
            .orElseThrow(
                () ->
                    ApiException.conflict(
                        "the lease on run "
                            + runId
                            + " was lost (cancelled, finished or expired)"));
    Json.respond(ctx, 200, Map.of("receipt", next));
  }
}
