package dev.pgworkflows.engine.internal.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.FlowChecks;
import dev.pgworkflows.engine.internal.checks.StartTimings;
import dev.pgworkflows.engine.internal.checks.WorkerChecks;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.ChainStore;
import dev.pgworkflows.engine.internal.store.FlowStore;
import dev.pgworkflows.engine.internal.store.NewRun;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.store.StepCompletion;
import dev.pgworkflows.engine.internal.store.TaskStore;
import dev.pgworkflows.engine.internal.telemetry.RunTrace;
import dev.pgworkflows.protocol.ChildStartRequest;
import dev.pgworkflows.protocol.Completion;
import dev.pgworkflows.protocol.CompletionAnswers;
import dev.pgworkflows.protocol.CompletionOutcome;
import dev.pgworkflows.protocol.ContinueAsNewOutcome;
import dev.pgworkflows.protocol.ContinueAsNewRequest;
import dev.pgworkflows.protocol.JournalOutcome;
import dev.pgworkflows.protocol.JournalRequest;
import dev.pgworkflows.protocol.JournalTail;
import dev.pgworkflows.protocol.LeaseExtended;
import dev.pgworkflows.protocol.LeaseRequest;
import dev.pgworkflows.protocol.Limits;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.PollRequest;
import dev.pgworkflows.protocol.RateLimitedOutcome;
import dev.pgworkflows.protocol.RateLimitedRequest;
import dev.pgworkflows.protocol.RetryOutcome;
import dev.pgworkflows.protocol.RetryRequest;
import dev.pgworkflows.protocol.RouteOutcome;
import dev.pgworkflows.protocol.RouteRequest;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.StartTiming;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.protocol.Take;
import dev.pgworkflows.protocol.Task;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;

/**
 * What a worker asks of the engine, whichever way it comes: a server route that read it from JSON,
 * or a worker in the same process over JDBC. Each call checks its request (a refusal is an {@link
 * ApiException} naming the field), makes the one database call that does it, and wakes or counts
 * what follows from it. Nothing here knows of HTTP; what only a server has (task streams, slot
 * reports) stays with the server.
 */
public final class WorkerCalls {
  public static final int MAX_BATCH = Limits.MAX_BATCH;
  public static final int MAX_STEPS = 1000;
  public static final long MAX_RETRY_AFTER_MS = 86_400_000L;
  private static final Set<String> ON_PARENT_CANCEL = Set.of("cancel", "abandon");

  /** The engine parts the calls use. */
  public record Parts(
      TaskPolls polls,
      WorkerSightings sightings,
      Completions completions,
      Retries retries,
      TaskStore tasks,
      FlowStore flow,
      Timers timers,
      ChainStore chains,
      RunStore runs,
      RunEnds runEnds,
      WorkflowEvents events,
      LongConsumer stateChanged,
      StickyWorkflows sticky) {}

  private final Parts p;

  public WorkerCalls(Parts parts) {
    this.p = parts;
  }

  /**
   * A long poll for tasks: the worker counts as seen at once, and until the poll ends. The future
   * completes with the tasks leased, none when the wait ran out.
   */
  public CompletableFuture<List<Task>> poll(String name, PollRequest req, WorkerIdentity who) {
    WorkerChecks.versions("versions", req.versions());
    int max = WorkerChecks.range("max", req.max(), 1, 1, 100);
    int wait =
        WorkerChecks.range(
            "waitSeconds", req.waitSeconds(), 0, 0, (int) LongPoll.MAX_WAIT.toSeconds());
    int lease = WorkerChecks.leaseSeconds("leaseSeconds", req.leaseSeconds());
    Integer journalMax = WorkerChecks.journalMax("journalMax", req.journalMax());
    WorkerSightings.Sighting seen = p.sightings().begin(name, who, req.versions(), null, "poll");
    CompletableFuture<List<Task>> result;
    try {
      result =
          p.polls()
              .poll(
                  name,
                  new PollTerms(req.versions(), max, lease, journalMax)
                      .of(who, p.sticky().contains(name)),
                  wait);
    } catch (RuntimeException e) {
      seen.done();
      throw e;
    }
    result.whenComplete((tasks, e) -> seen.done());
    return result;
  }

  /**
   * Many completions of one workflow in one transaction, each answered on its own: an item that
   * fails the checks of a completion is rejected with a status and a detail, and the others still
   * go through. {@code refused} (null, or one entry per item) holds the refusals of items the host
   * could not read. With a {@code take}, the answer carries up to {@code take.max} new tasks, taken
   * as a poll of worker {@code who} (null: unnamed) takes them.
   */
  public Completed complete(
      String name,
      List<Completion> items,
      ApiException[] refused,
      Take take,
      Instant received,
      WorkerIdentity who) {
    if (items == null || items.isEmpty() || items.size() > MAX_BATCH) {
      throw ApiException.badRequest(
          "completions", "completions must hold 1 to " + MAX_BATCH + " completions");
    }
    PollTerms terms = WorkerChecks.take(take);
    if (terms != null) {
      terms = terms.of(who, p.sticky().contains(name));
    }
    int n = items.size();
    List<CompletionOutcome> answers = new ArrayList<>(n);
    List<StepCompletion> accepted = new ArrayList<>(n);
    List<String> traceparents = new ArrayList<>(n);
    List<Integer> at = new ArrayList<>(n);
    Set<Long> runs = new HashSet<>();
    for (int i = 0; i < n; i++) {
      answers.add(null);
      Completion item = items.get(i);
      ApiException unread = refused == null ? null : refused[i];
      if (unread != null) {
        answers.set(i, CompletionOutcome.rejected(unread.status(), unread.getMessage()));
        continue;
      }
      try {
        if (item == null) {
          throw ApiException.badRequest(
              "completions[" + i + "]", "completions[" + i + "] must be an object, not null");
        }
        if (item.runId() == null || item.runId() < 1) {
          throw ApiException.badRequest(
              "runId",
              "runId "
                  + (item.runId() == null ? "is required: " : "must be ")
                  + "a positive integer");
        }
        if (!runs.add(item.runId())) {
          throw ApiException.badRequest(
              "runId", "run " + item.runId() + " appears more than once in the batch");
        }
        accepted.add(WorkerChecks.completion(item.runId(), WorkerChecks.request(item)));
        traceparents.add(item.traceparent());
        at.add(i);
      } catch (ApiException e) {
        answers.set(i, CompletionOutcome.rejected(e.status(), e.getMessage()));
      }
    }
    if (!accepted.isEmpty()) {
      List<CompletionOutcome> outcomes =
          p.completions().completeBatch(name, accepted, traceparents, received);
      for (int k = 0; k < outcomes.size(); k++) {
        answers.set(at.get(k), outcomes.get(k));
      }
    }
    if (terms == null) {
      return new Completed(new CompletionAnswers(answers, null), 0);
    }
    List<Task> tasks = p.completions().take(name, terms);
    return new Completed(new CompletionAnswers(answers, tasks), terms.max() - tasks.size());
  }

  /**
   * A batch's answers, and how many of the tasks its {@code take} asked for it did not get (the
   * slots that asked and are still free).
   */
  public record Completed(CompletionAnswers answers, int unfilled) {}

  /** Hands a task back to be due after its delay. */
  public RetryOutcome retry(String name, long runId, RetryRequest req) {
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    long delayMs = WorkerChecks.delayMs("delayMs", req.delayMs());
    String step = req.step();
    if (step != null) {
      WorkerChecks.stepName("step", step);
    }
    JsonNode error = req.error();
    if (error != null && !error.isNull() && !error.isObject()) {
      throw ApiException.badRequest("error", "error must be an object, as a journal row's error");
    }
    String errorJson = error == null || error.isNull() ? null : Json.write(error);
    return new RetryOutcome(p.retries().retry(name, runId, msg, receipt, delayMs, step, errorJson));
  }

  /** Extends a lease; a 409 when it was lost (cancelled, finished or expired). */
  public LeaseExtended extend(long runId, LeaseRequest req) {
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    int seconds = WorkerChecks.leaseSeconds("leaseSeconds", req.leaseSeconds());
    String next =
        p.tasks()
            .extendLease(runId, msg, receipt, seconds)
            .orElseThrow(
                () ->
                    ApiException.conflict(
                        "the lease on run "
                            + runId
                            + " was lost (cancelled, finished or expired)"));
    return new LeaseExtended(next);
  }

  /**
   * The rows of a run's journal that a worker holding it up to row {@code seq} (completed at {@code
   * completedAt}) lacks; the whole journal when it holds none ({@code seq} null) or that row has
   * gone.
   */
  public JournalTail journalAfter(long runId, Integer seq, Instant completedAt) {
    return p.tasks().journalAfter(runId, seq, completedAt);
  }

  /** Journals finished run steps (a parallel group's branches); the lease carries on. */
  public JournalOutcome journal(long runId, JournalRequest req) {
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    List<StepRecord> steps = steps(req.steps());
    JournalOutcome done = p.tasks().journalSteps(runId, msg, receipt, steps);
    if (done.journaled() > 0 && steps.stream().anyMatch(s -> s.state() != null)) {
      p.stateChanged().accept(runId);
    }
    return done;
  }

  /** Holds the run's key back after a rate-limited step; the delivery is not an attempt. */
  public RateLimitedOutcome rateLimited(String name, long runId, RateLimitedRequest req) {
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    if (req.retryAfterMs() == null
        || req.retryAfterMs() < 0
        || req.retryAfterMs() > MAX_RETRY_AFTER_MS) {
      throw ApiException.badRequest(
          "retryAfterMs", "retryAfterMs must be between 0 and " + MAX_RETRY_AFTER_MS);
    }
    RateLimitedOutcome out = p.flow().rateLimited(runId, msg, receipt, req.retryAfterMs());
    if (out.resumeAt() != null) {
      p.timers().wakeAt(Names.workflowQueue(name), out.resumeAt());
    }
    return out;
  }

  /**
   * Hands the held task to the workers whose labels hold the step's: it is due at once to them
   * alone, this delivery not counted.
   */
  public RouteOutcome route(String name, long runId, RouteRequest req) {
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    Map<String, String> labels = FlowChecks.labels("labels", req.labels(), 1);
    p.runs()
        .get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
    return new RouteOutcome(
        p.flow().route(runId, msg, receipt, labels, Boolean.TRUE.equals(req.soft())));
  }

  /**
   * Ends the run and starts its successor, journaling the held step in the same transaction; {@code
   * trace} is the successor's trace identity, null for none.
   */
  public ContinueAsNewOutcome continueAsNew(
      String name, long runId, ContinueAsNewRequest req, RunTrace trace) {
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    StepRecord step = heldStep(req.step());
    String input = req.input() == null ? "null" : Json.write(req.input());
    // The run must be of this workflow: its successor is started under the same name.
    p.runs()
        .get(name, runId)
        .orElseThrow(() -> ApiException.notFound("workflow " + name + " has no run " + runId));
    if (req.stepSeconds() != null && (req.stepSeconds() < 0 || req.stepSeconds().isNaN())) {
      throw ApiException.badRequest("stepSeconds", "stepSeconds must be zero or more");
    }
    ContinueAsNewOutcome answer =
        p.chains()
            .continueAsNew(runId, msg, receipt, input, step, trace == null ? null : trace.encode());
    if ("ok".equals(answer.outcome())) {
      if (step != null && req.stepSeconds() != null) {
        p.events().stepCompleted(name, step.name(), req.stepSeconds());
      }
      p.runs()
          .get(name, runId)
          .ifPresent(
              ended -> {
                Run r = ended.run();
                p.runEnds()
                    .ended(
                        name,
                        runId,
                        r.version(),
                        r.status(),
                        r.startedAt(),
                        r.completedAt(),
                        ended.traceContext());
              });
      p.events().started(name);
    }
    return answer;
  }

  /** Starts the child run of a step, once: a repeat answers the same child. */
  public StartResult startChild(String name, long parent, ChildStartRequest req, RunTrace trace) {
    NewRun child = child(req);
    if (p.runs().get(name, parent).isEmpty()) {
      throw ApiException.notFound("workflow " + name + " has no run " + parent);
    }
    StartResult s =
        p.runs()
            .startChild(
                parent,
                req.step(),
                req.workflow(),
                child.traced(trace == null ? null : trace.encode()),
                req.onParentCancel() == null ? "cancel" : req.onParentCancel());
    if (s.created()) {
      p.events().started(req.workflow());
    }
    return s;
  }

  /** Checks a child's start before any I/O; each failure a 400 naming the field. */
  public static NewRun child(ChildStartRequest req) {
    WorkerChecks.stepName("step", req.step());
    if (!Names.isWorkflowName(req.workflow())) {
      throw ApiException.badRequest(
          "workflow",
          "workflow must be a workflow name: 1 to 43 characters of a-z, 0-9, \"_\" and \"-\","
              + " not starting with \"-\"");
    }
    if (req.onParentCancel() != null && !ON_PARENT_CANCEL.contains(req.onParentCancel())) {
      throw ApiException.badRequest(
          "onParentCancel", "onParentCancel must be cancel (the default) or abandon");
    }
    if (req.version() != null) {
      WorkerChecks.range("version", req.version(), 1, 1, 1_000_000);
    }
    if (req.retentionDays() != null) {
      WorkerChecks.range("retentionDays", req.retentionDays(), 30, 1, 36500);
    }
    if (req.deadlineMs() != null
        && (req.deadlineMs() < 1 || req.deadlineMs() > StartTimings.MAX_MS)) {
      throw ApiException.badRequest(
          "deadlineMs",
          "deadlineMs must be between 1 and " + StartTimings.MAX_MS + ", got " + req.deadlineMs());
    }
    return new NewRun(
        req.input() == null ? "null" : Json.write(req.input()),
        req.version(),
        null,
        req.retentionDays(),
        null,
        req.deadlineMs() == null
            ? StartTiming.NONE
            : new StartTiming(null, null, null, req.deadlineMs(), null, null),
        FlowChecks.key("concurrencyKey", req.concurrencyKey()),
        FlowChecks.priority(req.priority()),
        null);
  }

  /** The held step a continuation journals, checked as a completion's step is. */
  private static StepRecord heldStep(StepRecord step) {
    if (step == null) {
      return null;
    }
    WorkerChecks.stepName("step.name", step.name());
    if (!Names.isStepKind(step.kind())) {
      throw ApiException.badRequest(
          "step.kind", "step.kind must be one of run, sleep, wait and child");
    }
    WorkerChecks.error("step.error", step.error());
    WorkerChecks.state("step.state", step.state());
    return step;
  }

  /** The steps, each a {@code run} step with a name of its own; a 400 naming the first misfit. */
  private static List<StepRecord> steps(List<StepRecord> steps) {
    if (steps == null || steps.isEmpty() || steps.size() > MAX_STEPS) {
      throw ApiException.badRequest("steps", "steps must hold 1 to " + MAX_STEPS + " steps");
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < steps.size(); i++) {
      StepRecord s = steps.get(i);
      String at = "steps[" + i + "]";
      if (s == null) {
        throw ApiException.badRequest(at, at + " must be a step object");
      }
      if (!Names.isStepName(s.name())) {
        throw ApiException.badRequest(
            at + ".name",
            at + ".name must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\"");
      }
      if (!"run".equals(s.kind())) {
        throw ApiException.badRequest(
            at + ".kind", at + ".kind must be run: only run steps are journaled here");
      }
      WorkerChecks.error(at + ".error", s.error());
      WorkerChecks.state(at + ".state", s.state());
      if (!names.add(s.name())) {
        throw ApiException.badRequest(at + ".name", "step \"" + s.name() + "\" is in steps twice");
      }
    }
    return steps;
  }
}
