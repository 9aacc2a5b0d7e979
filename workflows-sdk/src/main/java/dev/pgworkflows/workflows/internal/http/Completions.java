package dev.pgworkflows.workflows.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.ApiException;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Step completions of one worker, sent together. A run's task thread hands its completion over and
 * waits; a sender takes everything that is waiting (up to {@value #MAX_BATCH}) and posts it as one
 * request, which the server applies in one transaction. Nothing waits on purpose: under light load
 * a batch holds one completion and costs what a single call would; under load, completions that
 * arrive while a request is in flight go out together in the next, so round trips and commits are
 * shared instead of queued behind each other.
 */
public final class Completions implements AutoCloseable {
  static final int MAX_BATCH = 100;
  private static final int SENDERS = 2;

  private record Pending(Map<String, Object> item, CompletableFuture<JsonNode> answer) {}

  private final Transport transport;
  private final String path;
  private final BlockingQueue<Pending> waiting = new LinkedBlockingQueue<>();
  private final List<Thread> senders = new ArrayList<>();
  private volatile boolean closed;

  public Completions(Transport transport, String workflow) {
    this.transport = transport;
    this.path = "/v1/workflows/" + workflow + "/tasks/complete";
    for (int i = 0; i < SENDERS; i++) {
      Thread t = new Thread(this::sendLoop, "wf-" + workflow + "-complete-" + (i + 1));
      t.setDaemon(true);
      t.start();
      senders.add(t);
    }
  }

  /**
   * Completes one step of run {@code runId} ({@code body} as for the single-run complete route) and
   * returns the server's answer for it. Throws {@link ApiException} when the server rejected this
   * completion and {@link ServerUnavailableException} when the request could not be made.
   */
  public JsonNode complete(long runId, Map<String, Object> body) {
    Map<String, Object> item = new LinkedHashMap<>();
    item.put("runId", runId);
    item.putAll(body);
    // The step span's context, so the server's record of this write joins the run's trace.
    W3CTraceContextPropagator.getInstance()
        .inject(io.opentelemetry.context.Context.current(), item, (m, k, v) -> m.put(k, v));
    Pending p = new Pending(item, new CompletableFuture<>());
    if (closed) {
      throw new ServerUnavailableException("the worker closed", null);
    }
    waiting.add(p);
    if (closed) {
      // close() may have drained the queue just before this was added.
      failWaiting();
    }
    try {
      return p.answer().get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new ServerUnavailableException("completion failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerUnavailableException("interrupted while completing a step", e);
    }
  }

  private void sendLoop() {
    List<Pending> batch = new ArrayList<>(MAX_BATCH);
    while (true) {
      batch.clear();
      try {
        batch.add(waiting.take());
      } catch (InterruptedException e) {
        return;
      }
      waiting.drainTo(batch, MAX_BATCH - 1);
      send(batch);
    }
  }

  private void send(List<Pending> batch) {
    List<Map<String, Object>> items = new ArrayList<>(batch.size());
    for (Pending p : batch) {
      items.add(p.item());
    }
    try {
      JsonNode results = transport.post(path, Map.of("completions", items)).get("results");
      for (int i = 0; i < batch.size(); i++) {
        JsonNode r = results == null ? null : results.get(i);
        if (r == null) {
          batch
              .get(i)
              .answer()
              .completeExceptionally(
                  new ServerUnavailableException("the server's answer missed a completion", null));
        } else if ("rejected".equals(r.path("outcome").asText())) {
          batch
              .get(i)
              .answer()
              .completeExceptionally(
                  new ApiException(r.path("status").asInt(400), r.path("detail").asText()));
        } else {
          batch.get(i).answer().complete(r);
        }
      }
    } catch (RuntimeException e) {
      for (Pending p : batch) {
        p.answer().completeExceptionally(e);
      }
    }
  }

  /** Stops the senders; a completion still waiting, or handed over later, fails at once. */
  @Override
  public void close() {
    closed = true;
    senders.forEach(Thread::interrupt);
    failWaiting();
  }

  private void failWaiting() {
    Pending p;
    while ((p = waiting.poll()) != null) {
      p.answer().completeExceptionally(new ServerUnavailableException("the worker closed", null));
    }
  }
}
