package dev.pgworkflows.workflows.internal.link;

import dev.pgworkflows.protocol.Completion;
import dev.pgworkflows.protocol.CompletionBatch;
import dev.pgworkflows.protocol.CompletionOutcome;
import dev.pgworkflows.protocol.Limits;
import dev.pgworkflows.protocol.Next;
import dev.pgworkflows.protocol.Take;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.replay.Task;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * Step completions of one worker, sent together. A run's task thread hands its completion over and
 * waits; whatever is waiting (up to {@value #MAX_BATCH}) goes out as one request, which the server
 * applies in one transaction. Nothing waits on purpose: under light load a batch holds one
 * completion and costs what a single call would; under load, completions that arrive while a
 * request is in flight go out together in the next, so round trips and commits are shared instead
 * of queued behind each other.
 *
 * <p>The task threads send the batches themselves, at most {@value #SENDERS} at a time: a thread
 * that finds a free slot sends what is waiting (its own completion among it) on its own thread; one
 * that does not waits. A sender whose answer came back hands its slot, with the completions waiting
 * by then, to the oldest of their threads, which wakes to send them. Every completion's thread is
 * woken once, with its answer or with a batch to send, and no thread sits between a task and the
 * server: a lone completion is one request on the calling thread.
 *
 * <p>With a {@link TakeBack}, a batch holding completions that free a slot asks for as many tasks
 * as it frees slots, and each such completion's thread is handed at most one of them: a worker
 * under load takes its next runs with the answers of the last ones instead of a poll of their own.
 */
public final class Completions implements AutoCloseable {
  static final int MAX_BATCH = Limits.MAX_BATCH;
  private static final int SENDERS = 2;

  /** The slot to send {@code batch}, handed to the thread of its first completion. */
  private record Lead(List<Pending> batch) {}

  /** One completion and the thread waiting for its answer. */
  private static final class Pending {
    final Completion item;
    final boolean frees;
    final boolean asks;

    /** When the item's {@code next.delayMs} began ({@link System#nanoTime()}); null: on receipt. */
    final Long delayFrom;

    final Thread owner = Thread.currentThread();

    /** A task taken back for this completion's slot; set before the outcome. */
    Task task;

    /** Null while waiting; then the answer (a CompletionOutcome), a RuntimeException, or a Lead. */
    volatile Object outcome;

    Pending(Completion item, boolean frees, boolean asks, Long delayFrom) {
      this.item = item;
      this.frees = frees;
      this.asks = asks;
      this.delayFrom = delayFrom;
    }

    /**
     * The item as sent now: a delay that began before it carries what is left of it, measured on
     * the monotonic clock, so neither the time it waited to be sent nor the worker's wall clock
     * moves the delay's end (the server counts what it gets from its own receipt).
     */
    Completion toSend() {
      Next n = item.next();
      if (delayFrom == null || n == null || n.delayMs() == null) {
        return item;
      }
      long elapsedMs = (System.nanoTime() - delayFrom) / 1_000_000;
      long left = Math.max(0, n.delayMs() - Math.max(0, elapsedMs));
      return new Completion(
          item.runId(),
          item.messageId(),
          item.receipt(),
          item.step(),
          new Next(n.reason(), left, n.inline(), n.waitFor(), null),
          item.result(),
          item.leaseSeconds(),
          item.stepSeconds(),
          item.traceparent());
    }

    void settle(Object o) {
      outcome = o;
      LockSupport.unpark(owner);
    }

    /**
     * Waits for the outcome. Interrupts do not end the wait (a thread chosen to send must send, and
     * every wait ends within a request's timeout or at close); the flag is kept for the caller.
     */
    Object await() {
      boolean interrupted = false;
      Object o;
      while ((o = outcome) == null) {
        LockSupport.park(this);
        interrupted |= Thread.interrupted();
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      return o;
    }
  }

  private final WorkerTransport transport;
  private final String workflow;
  private final TakeBack takeBack;
  private final SlotReports slots;
  private final Object lock = new Object();
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
  private int sending;
  private boolean closed;

  public Completions(WorkerTransport transport, String workflow) {
    this(transport, workflow, null, SlotReports.NONE);
  }

  public Completions(WorkerTransport transport, String workflow, TakeBack takeBack) {
    this(transport, workflow, takeBack, SlotReports.NONE);
  }

  /** Every batch carries the worker's slot report for its task stream, from {@code slots}. */
  public Completions(
      WorkerTransport transport, String workflow, TakeBack takeBack, SlotReports slots) {
    this.transport = transport;
    this.workflow = workflow;
    this.takeBack = takeBack;
    this.slots = slots;
  }

  /**
   * The slot report for a write after which {@code freeing} more slots are free; null without a
   * task stream.
   */
  public String slotReport(int freeing) {
    return slots.report(freeing);
  }

  /**
   * Sends one completion and returns the server's answer for it. Throws {@link ApiException} when
   * the server rejected this completion and {@link ServerUnavailableException} when the request
   * could not be made.
   */
  public CompletionOutcome complete(Completion completion) {
    return complete(completion, false);
  }

  /**
   * As {@link #complete(Completion)}; {@code frees} says the calling thread is done with the run
   * after this completion, so with a {@link TakeBack} open, a task may be handed over for its slot.
   */
  public CompletionOutcome complete(Completion completion, boolean frees) {
    return complete(completion, frees, null);
  }

  /**
   * As {@link #complete(Completion, boolean)}; {@code delayFromNanos} (a {@link System#nanoTime()}
   * reading, or null) is when the completion's {@code next.delayMs} began: it is sent with what is
   * left of that delay.
   */
  public CompletionOutcome complete(Completion completion, boolean frees, Long delayFromNanos) {
    Completion item = withTrace(completion);
    Pending p =
        new Pending(
            item,
            frees,
            frees && takeBack != null && takeBack.open().getAsBoolean(),
            delayFromNanos);
    List<Pending> batch = null;
    synchronized (lock) {
      if (closed) {
        throw new ServerUnavailableException("the worker closed", null);
      }
      waiting.add(p);
      if (sending < SENDERS) {
        sending++;
        batch = take();
      }
    }
    Object o = batch != null ? lead(batch, p) : p.await();
    if (o instanceof Lead l) {
      o = lead(l.batch(), p);
    }
    if (p.task != null) {
      takeBack.handed().accept(p.task);
    }
    if (o instanceof RuntimeException e) {
      throw e;
    }
    return (CompletionOutcome) o;
  }

  /** The step span's context, so the server's record of this write joins the run's trace. */
  private static Completion withTrace(Completion c) {
    Map<String, String> carrier = new HashMap<>(2);
    W3CTraceContextPropagator.getInstance().inject(Context.current(), carrier, Map::put);
    String traceparent = carrier.get("traceparent");
    if (traceparent == null) {
      return c;
    }
    return new Completion(
        c.runId(),
        c.messageId(),
        c.receipt(),
        c.step(),
        c.next(),
        c.result(),
        c.leaseSeconds(),
        c.stepSeconds(),
        traceparent);
  }

  /** Up to MAX_BATCH of the waiting completions, oldest first; called holding the lock. */
  private List<Pending> take() {
    List<Pending> batch = new ArrayList<>(Math.min(waiting.size(), MAX_BATCH));
    while (batch.size() < MAX_BATCH && !waiting.isEmpty()) {
      batch.add(waiting.poll());
    }
    return batch;
  }

  /** Sends {@code batch} (which holds {@code self}), passes the slot on, returns self's outcome. */
  private Object lead(List<Pending> batch, Pending self) {
    try {
      send(batch);
    } finally {
      handOn();
    }
    return self.outcome;
  }

  private void handOn() {
    List<Pending> next;
    synchronized (lock) {
      if (closed || waiting.isEmpty()) {
        sending--;
        return;
      }
      next = take();
    }
    next.get(0).settle(new Lead(next));
  }

  private void send(List<Pending> batch) {
    List<Completion> items = new ArrayList<>(batch.size());
    int frees = 0;
    int asks = 0;
    for (Pending p : batch) {
      items.add(p.toSend());
      frees += p.frees ? 1 : 0;
      asks += p.asks ? 1 : 0;
    }
    Take take =
        asks > 0
            ? new Take(
                takeBack.versions(),
                asks,
                (int) Math.min(Integer.MAX_VALUE, takeBack.leaseSeconds()),
                JournalCache.INLINE_MAX)
            : null;
    // The request belongs to no one run's trace (each item carries its own), whichever run's
    // thread sends it.
    Scope root = Context.root().makeCurrent();
    try {
      // Slots that ask for a task are not reported free: the server counts those it could not
      // fill as free when it applies the report.
      WorkerTransport.CompletionReply answer =
          transport.complete(workflow, new CompletionBatch(items, take), slotReport(frees - asks));
      List<Task> tasks = answer.tasks();
      if (tasks != null && !tasks.isEmpty()) {
        int k = 0;
        for (Pending p : batch) {
          if (p.asks && k < tasks.size()) {
            p.task = tasks.get(k++);
          }
        }
      }
      List<CompletionOutcome> results = answer.results();
      for (int i = 0; i < batch.size(); i++) {
        CompletionOutcome r = i < results.size() ? results.get(i) : null;
        if (r == null) {
          batch
              .get(i)
              .settle(
                  new ServerUnavailableException("the server's answer missed a completion", null));
        } else if ("rejected".equals(r.outcome())) {
          batch
              .get(i)
              .settle(
                  new ApiException(
                      r.status() == null ? 400 : r.status(), r.detail() == null ? "" : r.detail()));
        } else {
          batch.get(i).settle(r);
        }
      }
    } catch (RuntimeException e) {
      for (Pending p : batch) {
        p.settle(e);
      }
    } catch (Error e) {
      for (Pending p : batch) {
        p.settle(new ServerUnavailableException("completion failed: " + e, e));
      }
      throw e;
    } finally {
      root.close();
    }
  }

  /** Fails every completion still waiting; one handed over later fails at once. */
  @Override
  public void close() {
    List<Pending> left;
    synchronized (lock) {
      closed = true;
      left = new ArrayList<>(waiting);
      waiting.clear();
    }
    for (Pending p : left) {
      p.settle(new ServerUnavailableException("the worker closed", null));
    }
  }
}
