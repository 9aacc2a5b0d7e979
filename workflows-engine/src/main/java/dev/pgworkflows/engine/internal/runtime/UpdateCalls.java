package dev.pgworkflows.engine.internal.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.WorkerChecks;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.UpdateStore;
import dev.pgworkflows.engine.internal.telemetry.RunTrace;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.UpdateAnswers;
import dev.pgworkflows.protocol.UpdateResult;
import dev.pgworkflows.protocol.UpdateTask;
import dev.pgworkflows.protocol.UpdateWithStartRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Updates, whichever way they come (a server route, or a client or worker in this process over
 * JDBC): a caller sends one and waits for its answer; the worker of an update task takes the run's
 * pending updates and answers them. Bad input is a 400 naming the field before any I/O; an update
 * to a run that has ended, or one its handler refused or its run dropped, a 409.
 */
public final class UpdateCalls {
  /** The longest a caller may wait for an answer in one request. */
  public static final int MAX_WAIT_SECONDS = 60;

  private final UpdateStore store;
  private final RunCalls runs;
  private final UpdateWaits waits;
  private final WorkflowEvents events;

  public UpdateCalls(UpdateStore store, RunCalls runs, UpdateWaits waits, WorkflowEvents events) {
    this.store = store;
    this.runs = runs;
    this.waits = waits;
    this.events = events;
  }

  /**
   * Sends update {@code update} to run {@code runId} of workflow {@code name} and waits up to
   * {@code waitSeconds} for its answer: completes with the update as it then stands (pending when
   * the wait ran out), or with a 409 when it was refused or dropped. {@code keyField} names where
   * the idempotency key came from, for a refusal.
   */
  public CompletableFuture<UpdateResult> send(
      String name,
      long runId,
      String update,
      JsonNode input,
      String key,
      String keyField,
      Integer waitSeconds) {
    checkName(update);
    checkKey(key, keyField);
    int wait = waitSeconds(waitSeconds);
    runs.run(name, runId);
    UpdateResult sent = store.send(runId, update, Json.write(input), key);
    return settle(sent, wait);
  }

  /**
   * Starts a run of workflow {@code name} (or finds the one the start's idempotency key names) and
   * sends it update {@code update}, in one transaction, then waits as {@link #send} does.
   */
  public CompletableFuture<UpdateResult> sendWithStart(
      String name,
      UpdateWithStartRequest req,
      RunTrace trace,
      String key,
      String keyField,
      Integer waitSeconds) {
    if (req.start() == null) {
      throw ApiException.badRequest("start", "start is required: the run to start or find");
    }
    if (req.start().idempotencyKey() == null) {
      throw ApiException.badRequest(
          "start.idempotencyKey",
          "start.idempotencyKey is required: it names the run a repeat finds");
    }
    checkName(req.update());
    checkKey(key, keyField);
    int wait = waitSeconds(waitSeconds);
    UpdateResult sent =
        runs.startWithUpdate(name, req.start(), trace, req.update(), Json.write(req.input()), key);
    return settle(sent, wait);
  }

  /**
   * Update {@code updateId} of run {@code runId}, waiting up to {@code waitSeconds} as a send does.
   */
  public CompletableFuture<UpdateResult> result(
      String name, long runId, long updateId, Integer waitSeconds) {
    int wait = waitSeconds(waitSeconds);
    runs.run(name, runId);
    UpdateResult now =
        store
            .result(updateId)
            .filter(r -> r.runId() == runId)
            .orElseThrow(
                () -> ApiException.notFound("run " + runId + " has no update " + updateId));
    return settle(now, wait);
  }

  /** The updates of run {@code runId} of workflow {@code name}, oldest first. */
  public List<UpdateStore.Listed> list(String name, long runId) {
    runs.run(name, runId);
    return store.list(runId);
  }

  /**
   * The pending updates of the update task a worker holds, and the run's state; a 409 when its
   * lease was lost.
   */
  public UpdateTask take(String name, long runId, UpdateTask.Request req) {
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    String json = store.take(runId, msg, receipt);
    if (json == null) {
      throw ApiException.conflict(
          "the lease on the update task of run " + runId + " was lost (answered or expired)");
    }
    return Json.read(json, UpdateTask.class);
  }

  /** Answers the updates of the update task a worker holds, which this ends. */
  public UpdateAnswers.Outcome answer(String name, long runId, UpdateAnswers req) {
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    if (req.answers() == null) {
      throw ApiException.badRequest("answers", "answers is required");
    }
    JsonNode done = Json.read(store.answer(runId, msg, receipt, Json.write(req.answers())));
    List<Long> ids = new ArrayList<>();
    for (JsonNode a : done.path("answered")) {
      ids.add(a.path("updateId").asLong());
      events.updated(name, a.path("update").asText(), a.path("status").asText());
    }
    waits.answered(ids);
    return new UpdateAnswers.Outcome(done.path("outcome").asText());
  }

  private CompletableFuture<UpdateResult> settle(UpdateResult now, int wait) {
    if (now.settled() || wait == 0) {
      return CompletableFuture.completedFuture(answer(now));
    }
    CompletableFuture<UpdateResult> waiting = waits.await(now.updateId(), Duration.ofSeconds(wait));
    if (waiting == null) {
      throw new ApiException(
          503,
          UpdateWaits.MAX_WAITS
              + " callers wait for updates here already; send with waitSeconds 0 and read the"
              + " answer later, or try again");
    }
    return waiting.thenApply(
        r -> answer(r == null ? now : r.withCreated(now.created(), now.runCreated())));
  }

  /** The update as a caller gets it: a 409 when it was refused or dropped. */
  private static UpdateResult answer(UpdateResult r) {
    switch (r.status()) {
      case "refused" ->
          throw ApiException.conflict(
              "update " + r.update() + " was refused: " + message(r.error()));
      case "dropped" ->
          throw ApiException.conflict(
              "run " + r.runId() + " ended before it answered update " + r.update());
      default -> {
        return r;
      }
    }
  }

  private static String message(String error) {
    if (error == null) {
      return "no reason given";
    }
    JsonNode e = Json.read(error);
    return e.hasNonNull("message") ? e.get("message").asText() : e.toString();
  }

  private static void checkName(String update) {
    if (!Names.isStepName(update)) {
      throw ApiException.badRequest(
          "update", "update must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\"");
    }
  }

  private static void checkKey(String key, String keyField) {
    if (key != null && (key.isEmpty() || key.codePointCount(0, key.length()) > 255)) {
      throw ApiException.badRequest(keyField, keyField + " must be 1 to 255 characters");
    }
  }

  private static int waitSeconds(Integer waitSeconds) {
    int wait = waitSeconds == null ? 0 : waitSeconds;
    if (wait < 0 || wait > MAX_WAIT_SECONDS) {
      throw ApiException.badRequest(
          "waitSeconds", "waitSeconds must be between 0 and " + MAX_WAIT_SECONDS);
    }
    return wait;
  }
}
