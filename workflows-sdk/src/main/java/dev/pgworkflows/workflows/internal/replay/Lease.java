package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.internal.http.Completions;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.http.StreamSlots;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
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
  private static final String COMPLETE = "/complete";

  private final Transport transport;
  private final Completions completions;
  private final long runId;
  private final String base;
  private final long messageId;
  private final Duration duration;
  private String receipt;
  private long expiresAtNanos;

  public Lease(
      Transport transport, Completions completions, String workflow, Task task, Duration duration) {
    this.transport = transport;
    this.completions = completions;
    this.runId = task.runId();
    this.base = "/v1/workflows/" + workflow + "/runs/" + task.runId();
    this.messageId = task.messageId();
    this.receipt = task.receipt();
    this.duration = duration;
    this.expiresAtNanos = System.nanoTime() + duration.toNanos();
  }

  /** Journals and continues inline; returns the outcome ("ok", "stale", ...). */
  public synchronized String completeInline(Map<String, Object> step, Double seconds) {
    Map<String, Object> body = base();
    body.put("step", step);
    body.put("next", Map.of("inline", true));
    if (seconds != null) {
      body.put("stepSeconds", seconds);
    }
    JsonNode r = write(COMPLETE, body, false);
    String outcome = r.get("outcome").asText();
    if ("ok".equals(outcome)) {
      // The same receipt means the lease was kept as it was, ending when it did.
      String next = r.get("receipt").asText();
      if (!next.equals(receipt)) {
        receipt = next;
        expiresAtNanos = System.nanoTime() + duration.toNanos();
      }
    }
    return outcome;
  }

  /** Journals (when step is given) and hands the run back with {@code next}. */
  public synchronized String suspend(Map<String, Object> step, Map<String, Object> next) {
    Map<String, Object> body = base();
    if (step != null) {
      body.put("step", step);
    }
    body.put("next", next);
    return write(COMPLETE, body, true).get("outcome").asText();
  }

  /**
   * Ends the run with {@code result} ({"status": "completed"|"failed", ...}), journaling {@code
   * step} (when given) in the same transaction.
   */
  public synchronized String finish(
      Map<String, Object> result, Map<String, Object> step, Double seconds) {
    Map<String, Object> body = base();
    if (step != null) {
      body.put("step", step);
    }
    if (seconds != null) {
      body.put("stepSeconds", seconds);
    }
    body.put("result", result);
    return write(COMPLETE, body, true).get("outcome").asText();
  }

  /** Hands the task back to reappear after {@code delay}. */
  public synchronized String retryLater(Duration delay, String step) {
    Map<String, Object> body = base();
    body.remove("leaseSeconds");
    body.put("delayMs", delay.toMillis());
    if (step != null) {
      body.put("step", step);
    }
    return write("/retry", body, false).get("outcome").asText();
  }

  /** Extends the lease; false when it is lost (the run was cancelled, finished or taken over). */
  public synchronized boolean extend() {
    Map<String, Object> body = base();
    body.put("leaseSeconds", duration.toSeconds());
    try {
      JsonNode r = transport.post(base + "/lease", body);
      receipt = r.get("receipt").asText();
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

  private Map<String, Object> base() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("messageId", messageId);
    body.put("receipt", receipt);
    body.put("leaseSeconds", duration.toSeconds());
    return body;
  }

  /**
   * Posts a write, retrying while the server is unreachable. A refusal (4xx) means this worker can
   * no longer act for the run: the body unwinds and the lease is left to run out. {@code frees}: a
   * completion after which this thread is done with the run (it may bring the slot's next task).
   */
  private JsonNode write(String path, Map<String, Object> body, boolean frees) {
    long backoffMs = 50;
    while (true) {
      try {
        // Step completions travel with those of the worker's other runs (one request, one
        // transaction); the rarer writes go on their own.
        // A task handed back (a retry) frees its slot, which the worker's task stream hears of.
        return path.equals(COMPLETE)
            ? completions.complete(runId, body, frees)
            : transport.post(
                base + path,
                body,
                StreamSlots.HEADER,
                completions.slotReport(path.equals("/retry") ? 1 : 0));
      } catch (ApiException e) {
        log.error("the server refused {} {}: {}", base, path, e.getMessage());
        throw new Suspend(Suspend.Why.LEASE_LOST);
      } catch (ServerUnavailableException e) {
        if (System.nanoTime() - expiresAtNanos > 0) {
          log.warn("giving up on {}: the lease has run out ({})", path, e.getMessage());
          return Transport.JSON.createObjectNode().put("outcome", "stale");
        }
        log.debug("server unavailable for {}; retrying in {} ms", path, backoffMs);
        try {
          Thread.sleep(backoffMs);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return Transport.JSON.createObjectNode().put("outcome", "stale");
        }
        backoffMs = Math.min(backoffMs * 2, 2_000);
      }
    }
  }
}
