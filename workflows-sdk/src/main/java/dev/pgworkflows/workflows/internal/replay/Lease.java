package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.CallbackMinted;
import dev.pgworkflows.protocol.CallbackRequest;
import dev.pgworkflows.protocol.ChildStartRequest;
import dev.pgworkflows.protocol.Completion;
import dev.pgworkflows.protocol.CompletionOutcome;
import dev.pgworkflows.protocol.ContinueAsNewRequest;
import dev.pgworkflows.protocol.JournalOutcome;
import dev.pgworkflows.protocol.JournalRequest;
import dev.pgworkflows.protocol.LeaseExtended;
import dev.pgworkflows.protocol.LeaseRequest;
import dev.pgworkflows.protocol.Next;
import dev.pgworkflows.protocol.RateLimitedRequest;
import dev.pgworkflows.protocol.RetryRequest;
import dev.pgworkflows.protocol.RouteRequest;
import dev.pgworkflows.protocol.RunResult;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.protocol.StreamWrite;
import dev.pgworkflows.protocol.StreamWritten;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.link.Completions;
import dev.pgworkflows.workflows.internal.link.WorkerTransport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease a worker holds on one run's task, and every write made under it. The receipt changes
 * when the lease is extended, and when an inline continuation renews it (the server does once less
 * than two thirds are left); all writes are serialised so each presents the newest receipt. Writes
 * are retried while the server is unreachable, until the lease would have expired anyway.
 */
public final class Lease {
  private static final Logger log = LoggerFactory.getLogger(Lease.class);
  private static final Next INLINE = new Next(null, null, true, null, null);
  private static final CompletionOutcome STALE = CompletionOutcome.of("stale");
  private static final JournalOutcome STALE_STEPS = new JournalOutcome("stale", 0);

  private final WorkerTransport transport;
  private final String workflow;
  private final Completions completions;
  private final long runId;
  private final String base;
  private final long messageId;
  private final Duration duration;
  private final int leaseSeconds;
  private final boolean offline;
  private String receipt;
  private volatile long expiresAtNanos;

  public Lease(
      WorkerTransport transport,
      Completions completions,
      String workflow,
      Task task,
      Duration duration) {
    this(transport, completions, workflow, task, duration, false);
  }

  private Lease(
      WorkerTransport transport,
      Completions completions,
      String workflow,
      Task task,
      Duration duration,
      boolean offline) {
    this.offline = offline;
    this.transport = transport;
    this.workflow = workflow;
    this.completions = completions;
    this.runId = task.runId();
    this.base = "/v1/workflows/" + workflow + "/runs/" + task.runId();
    this.messageId = task.messageId();
    this.receipt = task.receipt();
    this.duration = duration;
    this.leaseSeconds = (int) Math.min(Integer.MAX_VALUE, duration.toSeconds());
    this.expiresAtNanos = System.nanoTime() + duration.toNanos();
  }

  /**
   * A lease held on no server, for {@link ReplayOnly}: every write is refused before anything is
   * sent, by unwinding the body with {@link Suspend.Why#JOURNAL_END}. A replay reaches a write only
   * past its journal's end, so replaying through this lease touches nothing.
   */
  static Lease offline(String workflow, Task task) {
    return new Lease(null, null, workflow, task, Duration.ofMinutes(1), true);
  }

  /**
   * Journals and continues inline; returns the answer: its outcome ("ok", "stale", ...) and, after
   * "ok", the attempt of the run's next step.
   */
  public synchronized CompletionOutcome completeInline(StepRecord step, Double seconds) {
    CompletionOutcome r = complete(step, INLINE, null, seconds, false, null);
    if ("ok".equals(r.outcome())) {
      // The same receipt means the lease was kept as it was, ending when it did.
      String next = r.receipt();
      if (!next.equals(receipt)) {
        receipt = next;
        expiresAtNanos = System.nanoTime() + duration.toNanos();
      }
    }
    return r;
  }

  /** Journals (when step is given) and hands the run back with {@code next}. */
  public synchronized String suspend(StepRecord step, Next next) {
    return complete(step, next, null, null, true, null).outcome();
  }

  /**
   * As {@link #suspend(StepRecord, Next)}, with {@code next.delayMs} counted from {@code
   * calledNanos} (a {@link System#nanoTime()} reading): each send carries what is left of it, so
   * the delay ends by the server's clock however far the worker's wall clock is off.
   */
  public synchronized String suspend(StepRecord step, Next next, long calledNanos) {
    return complete(step, next, null, null, true, calledNanos).outcome();
  }

  /**
   * Ends the run with {@code result} (completed or failed), journaling {@code step} (when given) in
   * the same transaction.
   */
  public synchronized String finish(RunResult result, StepRecord step, Double seconds) {
    return complete(step, null, result, seconds, true, null).outcome();
  }

  /**
   * Ends the run and starts its successor with {@code input}, journaling {@code step} (when given)
   * in the same transaction; answers ok, stale or not_running.
   */
  public synchronized String continueAsNew(JsonNode input, StepRecord step, Double seconds) {
    ContinueAsNewRequest body = new ContinueAsNewRequest(messageId, receipt, input, step, seconds);
    return write(
        "/continue-as-new",
        () ->
            // The run is done with on this worker: its slot is free, as after a retry.
            transport.continueAsNew(workflow, runId, body, completions.slotReport(1)).outcome(),
        "stale");
  }

  /** Hands the task back to reappear after {@code delay}. */
  public synchronized String retryLater(Duration delay, String step) {
    return retryLater(delay, step, null);
  }

  /**
   * Hands the task back to reappear after {@code delay}, {@code step}'s attempt having failed with
   * {@code error} (the journal's error shape): the server shows it as the run's retrying step.
   */
  public synchronized String retryLater(Duration delay, String step, JsonNode error) {
    RetryRequest body = new RetryRequest(messageId, receipt, delay.toMillis(), step, error);
    return write(
        "/retry",
        () ->
            // A task handed back frees its slot, which the worker's task stream hears of.
            transport.retry(workflow, runId, body, completions.slotReport(1)).outcome(),
        "stale");
  }

  /**
   * Hands the task back after a step was rate-limited: the server holds every run of the run's
   * concurrency key back for {@code retryAfter}, and this delivery does not count as an attempt.
   */
  public synchronized String rateLimited(Duration retryAfter) {
    RateLimitedRequest body = new RateLimitedRequest(messageId, receipt, retryAfter.toMillis());
    return write(
        "/rate-limited",
        () -> transport.rateLimited(workflow, runId, body, completions.slotReport(1)).outcome(),
        "stale");
  }

  /**
   * Hands the task to the workers whose labels hold {@code labels}, for a step that needs them;
   * with {@code soft}, only while the registry lists such a worker. Answers routed, run_here (the
   * lease still holds: run the step here), stale or not_running.
   */
  public synchronized String route(Map<String, String> labels, boolean soft) {
    RouteRequest body = new RouteRequest(messageId, receipt, labels, soft);
    return write(
        "/route",
        // A soft hand-back may keep the task here, so it frees no slot until it is answered.
        () ->
            transport.route(workflow, runId, body, completions.slotReport(soft ? 0 : 1)).outcome(),
        "stale");
  }

  /**
   * Starts the child run of step {@code request.step()} (once: a repeat answers the same child). A
   * refusal (the run is no longer running) unwinds the body as a lost lease does.
   */
  public synchronized StartResult startChild(ChildStartRequest request) {
    return write(
        "/children",
        () -> transport.startChild(workflow, runId, request),
        new StartResult(0, "stale", false));
  }

  /**
   * Mints the run's callback {@code name}, good for {@code timeout} (a repeat answers the one
   * minted before). A refusal unwinds the body as a lost lease does.
   */
  public synchronized CallbackMinted createCallback(String name, Duration timeout) {
    return write(
        "/callbacks/" + name,
        () ->
            transport.createCallback(
                workflow, runId, name, new CallbackRequest(timeout.toMillis())),
        null);
  }

  /**
   * Journals finished run steps (a parallel group's branches) in one request; the lease carries on.
   * Answers "ok" with how many were new, or "stale" or "not_running" when the lease was lost.
   */
  public synchronized JournalOutcome journal(List<StepRecord> steps) {
    JournalRequest body = new JournalRequest(messageId, receipt, steps);
    return write("/steps", () -> transport.journal(workflow, runId, body), STALE_STEPS);
  }

  /**
   * Writes to the run's stream {@code stream}, retrying while the server is unreachable until the
   * lease would have run out. Not serialised with the lease's other writes (it presents no
   * receipt). A refusal is thrown to the writer as the {@link ApiException} it is.
   */
  public StreamWritten writeStream(String stream, StreamWrite body) {
    if (offline) {
      // A replay's stream writes were made when the run first came this way; an offline replay
      // sends nothing and goes on, as a replay past entries already stored does.
      return new StreamWritten(0, 0, false);
    }
    long backoffMs = 50;
    while (true) {
      try {
        return transport.writeStream(workflow, runId, stream, body);
      } catch (ServerUnavailableException e) {
        if (System.nanoTime() - expiresAtNanos > 0) {
          throw e;
        }
        log.debug("server unavailable for a stream write; retrying in {} ms", backoffMs);
        try {
          Thread.sleep(backoffMs);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
        backoffMs = Math.min(backoffMs * 2, 2_000);
      }
    }
  }

  /**
   * Sets some of the run's search attributes; an offline replay sends nothing (the run set them
   * when it first came this way). A refusal is thrown as the {@link ApiException} it is.
   */
  public void setAttributes(JsonNode attributes) {
    if (!offline) {
      transport.setAttributes(workflow, runId, attributes);
    }
  }

  /** Extends the lease; false when it is lost (the run was cancelled, finished or taken over). */
  public synchronized boolean extend() {
    refuseOffline();
    try {
      LeaseExtended r =
          transport.extend(workflow, runId, new LeaseRequest(messageId, receipt, leaseSeconds));
      receipt = r.receipt();
      expiresAtNanos = System.nanoTime() + duration.toNanos();
      return true;
    } catch (ApiException e) {
      if (e.status() == 409 || e.status() == 404) {
        return false;
      }
      throw e;
    } catch (ServerUnavailableException e) {
      log.debug("could not extend lease: {}", e.getMessage());
      return true;
    }
  }

  /**
   * A completion under this lease. Step completions travel with those of the worker's other runs
   * (one request, one transaction). {@code frees}: a completion after which this thread is done
   * with the run (it may bring the slot's next task). {@code delayFromNanos}: when {@code
   * next.delayMs} began, null when it begins as the server receives it.
   */
  private CompletionOutcome complete(
      StepRecord step,
      Next next,
      RunResult result,
      Double seconds,
      boolean frees,
      Long delayFromNanos) {
    Completion c =
        new Completion(runId, messageId, receipt, step, next, result, leaseSeconds, seconds, null);
    return write("/complete", () -> completions.complete(c, frees, delayFromNanos), STALE);
  }

  /**
   * Makes a write, retrying while the server is unreachable, and returns its outcome. A refusal
   * (4xx) means this worker can no longer act for the run: the body unwinds and the lease is left
   * to run out. Once the lease would have run out, or the thread is interrupted, the write gives up
   * as "stale".
   */
  private <T> T write(String what, Supplier<T> call, T stale) {
    refuseOffline();
    long backoffMs = 50;
    while (true) {
      try {
        return call.get();
      } catch (ApiException e) {
        log.error("the server refused {} {}: {}", base, what, e.getMessage());
        throw new Suspend(Suspend.Why.LEASE_LOST);
      } catch (ServerUnavailableException e) {
        if (System.nanoTime() - expiresAtNanos > 0) {
          log.warn("giving up on {}: the lease has run out ({})", what, e.getMessage());
          return stale;
        }
        log.debug("server unavailable for {}; retrying in {} ms", what, backoffMs);
        try {
          Thread.sleep(backoffMs);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return stale;
        }
        backoffMs = Math.min(backoffMs * 2, 2_000);
      }
    }
  }

  /** Stops an offline replay at its first write, before anything is sent. */
  private void refuseOffline() {
    if (offline) {
      throw new Suspend(Suspend.Why.JOURNAL_END);
    }
  }
}
