package dev.pgworkflows.engine.internal.checks;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.runtime.PollTerms;
import dev.pgworkflows.engine.internal.store.StepCompletion;
import dev.pgworkflows.protocol.CompleteRequest;
import dev.pgworkflows.protocol.Completion;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.Next;
import dev.pgworkflows.protocol.RunResult;
import dev.pgworkflows.protocol.RunStateLimits;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.protocol.Take;
import dev.pgworkflows.protocol.Wait;
import java.time.Instant;
import java.util.List;

/** The checks of the worker protocol's request fields; each failure a 400 naming the field. */
public final class WorkerChecks {
  /** The last instant an RFC 3339 date-time can name (four-digit years). */
  private static final Instant LAST_DATE_TIME = Instant.parse("9999-12-31T23:59:59.999999999Z");

  /** The longest delay a continuation or a retry may ask for: one year. */
  private static final long MAX_DELAY_MS = 31_536_000_000L;

  /** A step's name, as the SQL functions check it too. */

  /** The kinds of journal rows a worker may write ({@code wait} rows are usually the server's). */

  /** The most events one wait may take. */
  public static final int MAX_ARMS = 64;

  private WorkerChecks() {}

  /** A step name: 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-". */
  public static String stepName(String field, String name) {
    if (!Names.isStepName(name)) {
      throw ApiException.badRequest(
          field,
          field
              + " must be a step name: 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and"
              + " \"-\"");
    }
    return name;
  }

  /**
   * What a wait waits for: {@code event} (with its {@code match}) or {@code arms}, 1 to {@value
   * #MAX_ARMS} events of which the first or, with {@code all}, every one ends the wait. Whether it
   * has a timeout is {@code next.delayMs}'s business.
   */
  public static void waitFor(String field, Wait wait) {
    stepName(field + ".step", wait.step());
    if ((wait.event() == null) == (wait.arms() == null)) {
      throw ApiException.badRequest(
          field, field + " takes exactly one of event (one event) and arms (several)");
    }
    if (wait.event() != null) {
      eventName(field + ".event", wait.event());
      if (wait.all() != null) {
        throw ApiException.badRequest(
            field + ".all", field + ".all goes with arms: a wait on one event has nothing more");
      }
      return;
    }
    if (wait.match() != null) {
      throw ApiException.badRequest(
          field + ".match", field + ".match goes with event; each arm has a match of its own");
    }
    if (wait.arms().isEmpty() || wait.arms().size() > MAX_ARMS) {
      throw ApiException.badRequest(
          field + ".arms", field + ".arms must hold 1 to " + MAX_ARMS + " arms");
    }
    for (int i = 0; i < wait.arms().size(); i++) {
      Wait.Arm arm = wait.arms().get(i);
      String at = field + ".arms[" + i + "]";
      if (arm == null) {
        throw ApiException.badRequest(at, at + " must be an object with an event");
      }
      eventName(at + ".event", arm.event());
    }
  }

  /** An event a wait takes: 1 to 128 characters (as the inbox keeps them). */
  private static void eventName(String field, String event) {
    if (event == null || event.isEmpty() || event.codePointCount(0, event.length()) > 128) {
      throw ApiException.badRequest(field, field + " must be an event name of 1 to 128 characters");
    }
  }

  public static void versions(String field, List<Integer> versions) {
    if (versions == null || versions.isEmpty() || versions.size() > 16) {
      throw ApiException.badRequest(field, field + " must list 1 to 16 versions this worker runs");
    }
    for (Integer v : versions) {
      if (v == null || v < 1) {
        throw ApiException.badRequest(field, field + " must be positive integers");
      }
    }
  }

  public static int leaseSeconds(String field, Integer value) {
    return range(field, value, 60, 1, 43200);
  }

  /** A checked {@link Take}: what it takes, as a poll on these terms would; null for none. */
  public static PollTerms take(Take take) {
    if (take == null) {
      return null;
    }
    versions("take.versions", take.versions());
    return new PollTerms(
        take.versions(),
        range("take.max", take.max(), 1, 1, 100),
        leaseSeconds("take.leaseSeconds", take.leaseSeconds()),
        journalMax("take.journalMax", take.journalMax()));
  }

  /**
   * A task's journal rows above which it is withheld for the worker to ask for what it lacks; null
   * (the default) withholds none.
   */
  public static Integer journalMax(String field, Integer value) {
    return value == null ? null : range(field, value, 0, 0, 100_000);
  }

  public static long receipt(String raw) {
    if (raw == null) {
      throw ApiException.badRequest("receipt", "receipt is required");
    }
    try {
      return Long.parseLong(raw);
    } catch (NumberFormatException e) {
      throw ApiException.badRequest("receipt", "receipt is not one this server handed out");
    }
  }

  public static long messageId(Long id) {
    if (id == null) {
      throw ApiException.badRequest("messageId", "messageId is required: a positive integer");
    }
    if (id < 1) {
      throw ApiException.badRequest("messageId", "messageId must be a positive integer");
    }
    return id;
  }

  public static long delayMs(String field, Long delayMs) {
    if (delayMs == null || delayMs < 0 || delayMs > MAX_DELAY_MS) {
      throw ApiException.badRequest(field, "delayMs must be between 0 and one year");
    }
    return delayMs;
  }

  /**
   * An error, where given, is an object with a string {@code type} and {@code message} (and, by
   * convention, {@code stack} and {@code step}): what clients show of a failed step or run.
   */
  public static void error(String field, JsonNode error) {
    if (error == null || error.isNull()) {
      return;
    }
    if (!error.isObject()
        || !error.path("type").isTextual()
        || !error.path("message").isTextual()) {
      throw ApiException.badRequest(
          field, field + " must be an object with a string type and a string message");
    }
  }

  /** The completion a batch item stands for. */
  public static CompleteRequest request(Completion item) {
    return new CompleteRequest(
        item.messageId(),
        item.receipt(),
        item.step(),
        item.next(),
        item.result(),
        item.leaseSeconds(),
        item.stepSeconds());
  }

  /** A step's run state changes, when it has some: a 400 naming the field at the first misfit. */
  public static void state(String field, JsonNode changes) {
    if (changes != null) {
      String problem = RunStateLimits.changesProblem(field, changes);
      if (problem != null) {
        throw ApiException.badRequest(field, problem);
      }
    }
  }

  /** Checks one completion of run {@code runId}. */
  public static StepCompletion completion(long runId, CompleteRequest req) {
    long msg = messageId(req.messageId());
    long receipt = receipt(req.receipt());
    if ((req.next() == null) == (req.result() == null)) {
      throw ApiException.badRequest("next", "give exactly one of next and result");
    }
    Next next = req.next();
    if (next != null && Boolean.TRUE.equals(next.inline()) && req.leaseSeconds() == null) {
      // The server does not know the lease the task was handed out with; it renews to this.
      throw ApiException.badRequest(
          "leaseSeconds",
          "leaseSeconds is required with next.inline: the lease to keep (the worker's own)");
    }
    int lease = leaseSeconds("leaseSeconds", req.leaseSeconds());
    StepRecord step = req.step();
    if (step != null && (step.name() == null || step.kind() == null)) {
      throw ApiException.badRequest("step", "a step needs a name and a kind");
    }
    if (step != null) {
      stepName("step.name", step.name());
      if (!Names.isStepKind(step.kind())) {
        throw ApiException.badRequest(
            "step.kind", "step.kind must be one of run, sleep, wait and child");
      }
      error("step.error", step.error());
      state("step.state", step.state());
    }
    if (next != null) {
      if (next.delayMs() != null) {
        delayMs("next.delayMs", next.delayMs());
      }
      // A wait without delayMs has no timeout: only an event it takes brings the run back.
      if (next.waitFor() != null) {
        waitFor("next.wait", next.waitFor());
      }
      if (next.until() != null) {
        if (next.delayMs() == null) {
          throw ApiException.badRequest("next.until", "until needs delayMs");
        }
        if (next.until().isAfter(LAST_DATE_TIME)) {
          throw ApiException.badRequest("next.until", "until must be an RFC 3339 date-time");
        }
      }
    }
    RunResult r = req.result();
    if (r != null) {
      if (!"completed".equals(r.status()) && !"failed".equals(r.status())) {
        throw ApiException.badRequest("result.status", "status must be completed or failed");
      }
      if ("failed".equals(r.status()) && r.error() == null) {
        throw ApiException.badRequest("result.error", "a failed result needs an error");
      }
      error("result.error", r.error());
    }
    // An earlier worker's until, checked above, plays no part: the database never sees it.
    Next toApply =
        next == null || next.until() == null
            ? next
            : new Next(next.reason(), next.delayMs(), next.inline(), next.waitFor(), null);
    return new StepCompletion(runId, msg, receipt, step, toApply, r, lease, req.stepSeconds());
  }

  /**
   * {@code value}, or {@code dflt} when absent, within lo..hi; a 400 naming the field otherwise.
   */
  public static int range(String field, Integer value, int dflt, int lo, int hi) {
    int v = value == null ? dflt : value;
    if (v < lo || v > hi) {
      throw ApiException.badRequest(field, field + " must be between " + lo + " and " + hi);
    }
    return v;
  }
}
