package dev.pgworkflows.workflows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.UpdateResult;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.link.RunsLink;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A client's updates: sent with an idempotency key and asked again with it, a minute's long poll at
 * a time, until answered or out of time; a lost answer (a server restarted, a connection dropped)
 * is asked again under the same key, so the update is sent once.
 */
final class ClientUpdates implements AutoCloseable {
  private static final int MAX_WAIT_SECONDS = 60;

  private final RunsLink runs;
  private volatile ExecutorService async;

  ClientUpdates(RunsLink runs) {
    this.runs = runs;
  }

  <R> R update(
      String workflow, long runId, String update, Object input, Type type, UpdateOptions options) {
    Workflow.checkName(workflow);
    if (type == null) {
      throw new IllegalArgumentException("the answer's type is required (Void.class for none)");
    }
    UpdateOptions o = options == null ? UpdateOptions.DEFAULT : options;
    JsonNode body = Transport.JSON.valueToTree(input);
    String key = o.keyForCall();
    Instant end = Instant.now().plus(o.timeout());
    while (true) {
      long left = Math.max(0, Duration.between(Instant.now(), end).toSeconds());
      UpdateResult r =
          runs.update(workflow, runId, update, body, key, (int) Math.min(MAX_WAIT_SECONDS, left));
      if (r.settled()) {
        return answered(update, r, type);
      }
      if (left == 0) {
        throw new UpdatePendingException(update, r.updateId(), key);
      }
    }
  }

  <R> StartedUpdate<R> updateWithStart(
      String workflow,
      StartRequest start,
      String update,
      Object input,
      Type type,
      UpdateOptions options) {
    UpdateOptions o = options == null ? UpdateOptions.DEFAULT : options;
    String key = o.keyForCall();
    Instant end = Instant.now().plus(o.timeout());
    long left = Math.max(0, Duration.between(Instant.now(), end).toSeconds());
    UpdateResult first =
        runs.updateWithStart(
            workflow,
            start,
            update,
            Transport.JSON.valueToTree(input),
            key,
            (int) Math.min(MAX_WAIT_SECONDS, left));
    boolean made = Boolean.TRUE.equals(first.runCreated());
    R answer =
        first.settled()
            ? answered(update, first, type)
            : update(
                workflow,
                first.runId(),
                update,
                input,
                type,
                UpdateOptions.builder().idempotencyKey(key).timeout(remaining(end)).build());
    return new StartedUpdate<>(first.runId(), made, answer);
  }

  private static Duration remaining(Instant end) {
    Duration d = Duration.between(Instant.now(), end);
    return d.isNegative() ? Duration.ZERO : d;
  }

  private static <R> R answered(String update, UpdateResult r, Type type) {
    if ("failed".equals(r.status())) {
      throw new UpdateFailedException(update, read(r.error()));
    }
    return convert(r.output(), type);
  }

  <R> CompletableFuture<R> updateAsync(
      String workflow, long runId, String update, Object input, Type type, UpdateOptions options) {
    UpdateOptions o = options == null ? UpdateOptions.DEFAULT : options;
    // The key is fixed here, so however the future's work is retried it sends one update.
    UpdateOptions keyed =
        UpdateOptions.builder().timeout(o.timeout()).idempotencyKey(o.keyForCall()).build();
    return CompletableFuture.supplyAsync(
        () -> update(workflow, runId, update, input, type, keyed), executor());
  }

  private ExecutorService executor() {
    ExecutorService e = async;
    if (e == null) {
      synchronized (this) {
        if (async == null) {
          async =
              Executors.newCachedThreadPool(
                  r -> {
                    Thread t = new Thread(r, "pgworkflows-update");
                    t.setDaemon(true);
                    return t;
                  });
        }
        e = async;
      }
    }
    return e;
  }

  private static JsonNode read(String json) {
    try {
      return json == null ? null : Transport.JSON.readTree(json);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    ExecutorService e = async;
    if (e != null) {
      e.shutdownNow();
    }
  }

  /** Reads an answer's JSON text as the caller's type. */
  @SuppressWarnings("unchecked")
  private static <R> R convert(String json, Type type) {
    if (type == Void.class || json == null) {
      return null;
    }
    try {
      return (R)
          Transport.JSON.readValue(json, Transport.JSON.getTypeFactory().constructType(type));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new WorkflowException(
          "the update's answer does not read as " + type.getTypeName() + ": " + e.getMessage(), e);
    }
  }
}
