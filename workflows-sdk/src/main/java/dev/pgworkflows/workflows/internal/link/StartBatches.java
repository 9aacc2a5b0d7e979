package dev.pgworkflows.workflows.internal.link;

import dev.pgworkflows.protocol.Limits;
import dev.pgworkflows.protocol.Rejected;
import dev.pgworkflows.protocol.StartAnswer;
import dev.pgworkflows.protocol.StartBatchItem;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Starts from many threads, sent together. A caller queues its start and, if fewer than {@value
 * #SENDERS} sends are in flight, sends what is waiting itself; otherwise it waits for a sender to
 * take its start along. No thread of its own and no deliberate delay: a lone start goes out at once
 * as a single start, while starts that arrive during a send share the next one (grouped by
 * workflow, up to {@value #MAX_BATCH} a send), which the engine commits together, over HTTP or over
 * JDBC alike.
 *
 * <p>A sender goes on sending while starts wait, but once its own start is answered it stops after
 * a slow send (over 100 ms) and hands the turn to the start now first in line, whose caller sends
 * next. So a call lasts about as long as the sends ahead of it, its own and at most one more slow
 * one, never as long as others keep arriving: with a server that answers each send only after its 5
 * s wait for a database connection, a sender that kept sending for everyone held its own caller for
 * as long as the outage lasted.
 */
public final class StartBatches {
  /** How a batch goes out: one start, or many of one workflow. */
  public interface Sender {
    StartResult one(String workflow, StartRequest body);

    /** One answer per item, in order: a {@link StartResult} or a {@link Rejected}. */
    List<StartAnswer> many(String workflow, List<StartBatchItem> items);
  }

  static final int MAX_BATCH = Limits.MAX_BATCH;
  private static final int SENDERS = 2;

  /** A send slower than this, once the sender's own start is answered, hands the turn on. */
  private static final long HAND_ON_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  /** The longest a waiting caller sleeps before it looks again for a free send (a backstop). */
  private static final long RECHECK_MS = 50;

  /**
   * A start waiting for its answer; {@code wake} is released when the answer comes or when the turn
   * to send is handed to it.
   */
  private record Pending(
      String workflow,
      StartRequest body,
      Context context,
      CompletableFuture<StartResult> answer,
      Semaphore wake) {}

  private final Sender sender;
  private final Queue<Pending> waiting = new ConcurrentLinkedQueue<>();
  private final Semaphore sending = new Semaphore(SENDERS);

  public StartBatches(Sender sender) {
    this.sender = sender;
  }

  /**
   * Starts a run of {@code workflow} and returns the server's answer for it. Throws {@link
   * ApiException} when the server rejected this start and {@link ServerUnavailableException} when
   * the request could not be made.
   */
  public StartResult start(String workflow, StartRequest body) {
    Pending p =
        new Pending(workflow, body, Context.current(), new CompletableFuture<>(), new Semaphore(0));
    waiting.add(p);
    // Whoever holds a permit sends while starts wait, until a send is slow once its own start is
    // answered; it then wakes the start first in line, whose caller sends next. A caller that
    // missed a wake-up looks again within RECHECK_MS.
    try {
      while (!p.answer().isDone()) {
        // Nothing waiting means this start is in a send another caller made: wait for its answer.
        if (!waiting.isEmpty() && sending.tryAcquire()) {
          try {
            sendWhileWaiting(p);
          } finally {
            sending.release();
          }
          if (p.answer().isDone()) {
            Pending next = waiting.peek();
            if (next != null) {
              next.wake().release();
            }
          }
        } else {
          p.wake().tryAcquire(RECHECK_MS, TimeUnit.MILLISECONDS);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerUnavailableException("interrupted while starting a run", e);
    }
    try {
      return p.answer().get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new ServerUnavailableException("start failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerUnavailableException("interrupted while starting a run", e);
    }
  }

  /**
   * Sends what waits, send after send, as long as starts wait; once {@code own} is answered, only
   * while sends are quick. A hot thread that goes on sending keeps starts flowing under load (a
   * wake-up of another caller for each send costs a thread switch each time, which at half load
   * doubled the benchmark's step-to-step latency); a slow send (a server waiting for a database
   * connection) hands the turn on instead.
   */
  private void sendWhileWaiting(Pending own) {
    do {
      long t0 = System.nanoTime();
      sendOnce();
      if (own.answer().isDone() && System.nanoTime() - t0 > HAND_ON_AFTER_NANOS) {
        return;
      }
    } while (!waiting.isEmpty());
  }

  /** Sends the starts first in line (up to {@link #MAX_BATCH}), one send per workflow. */
  private void sendOnce() {
    List<Pending> taken = new ArrayList<>();
    Pending next;
    while (taken.size() < MAX_BATCH && (next = waiting.poll()) != null) {
      taken.add(next);
    }
    Map<String, List<Pending>> byWorkflow = new LinkedHashMap<>();
    for (Pending p : taken) {
      byWorkflow.computeIfAbsent(p.workflow(), k -> new ArrayList<>()).add(p);
    }
    byWorkflow.forEach(this::send);
    for (Pending p : taken) {
      p.wake().release();
    }
  }

  private void send(String workflow, List<Pending> batch) {
    if (batch.size() == 1) {
      Pending p = batch.get(0);
      // In the caller's context, so the request carries its trace.
      Scope scope = p.context().makeCurrent();
      try {
        p.answer().complete(sender.one(workflow, p.body()));
      } catch (RuntimeException e) {
        p.answer().completeExceptionally(e);
      } finally {
        scope.close();
      }
      return;
    }
    List<StartBatchItem> items = new ArrayList<>(batch.size());
    for (Pending p : batch) {
      Map<String, String> trace = new HashMap<>(2);
      W3CTraceContextPropagator.getInstance().inject(p.context(), trace, Map::put);
      StartRequest b = p.body();
      items.add(
          new StartBatchItem(
              b.input(),
              b.version(),
              b.idempotencyKey(),
              b.retentionDays(),
              trace.get("traceparent"),
              b.startAt(),
              b.delayMs(),
              b.deadlineAt(),
              b.deadlineMs(),
              b.debounceKey(),
              b.debounceMs(),
              b.concurrencyKey(),
              b.priority(),
              b.attributes()));
    }
    try {
      List<StartAnswer> runs = sender.many(workflow, items);
      for (int i = 0; i < batch.size(); i++) {
        StartAnswer r = runs != null && i < runs.size() ? runs.get(i) : null;
        CompletableFuture<StartResult> answer = batch.get(i).answer();
        if (r instanceof StartResult started) {
          answer.complete(started);
        } else if (r instanceof Rejected rejected) {
          answer.completeExceptionally(new ApiException(rejected.status(), rejected.detail()));
        } else {
          answer.completeExceptionally(
              new ServerUnavailableException("the answer missed a start", null));
        }
      }
    } catch (RuntimeException e) {
      for (Pending p : batch) {
        p.answer().completeExceptionally(e);
      }
    }
  }
}
