package dev.pgworkflows.workflows.internal.link;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.CallbackMinted;
import dev.pgworkflows.protocol.CallbackRequest;
import dev.pgworkflows.protocol.CancelOnRules;
import dev.pgworkflows.protocol.ChildStartRequest;
import dev.pgworkflows.protocol.CompletionBatch;
import dev.pgworkflows.protocol.CompletionOutcome;
import dev.pgworkflows.protocol.ConcurrencyLimit;
import dev.pgworkflows.protocol.ContinueAsNewOutcome;
import dev.pgworkflows.protocol.ContinueAsNewRequest;
import dev.pgworkflows.protocol.JournalOutcome;
import dev.pgworkflows.protocol.JournalRequest;
import dev.pgworkflows.protocol.JournalTail;
import dev.pgworkflows.protocol.LeaseExtended;
import dev.pgworkflows.protocol.LeaseRequest;
import dev.pgworkflows.protocol.PollRequest;
import dev.pgworkflows.protocol.RateLimitedOutcome;
import dev.pgworkflows.protocol.RateLimitedRequest;
import dev.pgworkflows.protocol.RetryOutcome;
import dev.pgworkflows.protocol.RetryRequest;
import dev.pgworkflows.protocol.RouteOutcome;
import dev.pgworkflows.protocol.RouteRequest;
import dev.pgworkflows.protocol.ScheduleRegistration;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.StreamWrite;
import dev.pgworkflows.protocol.StreamWritten;
import dev.pgworkflows.protocol.ThrottleSettings;
import dev.pgworkflows.protocol.UpdateAnswers;
import dev.pgworkflows.protocol.UpdateTask;
import dev.pgworkflows.protocol.WorkerRouting;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.replay.Task;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Everything a worker asks of the engine, in the protocol's records: over HTTP to a server, or over
 * JDBC to the engine in this process. Both answer alike: a refusal is an {@link ApiException} with
 * the status a server would give, and an engine out of reach (a server down, a database gone) a
 * {@link ServerUnavailableException}, which the worker retries while its lease lasts. {@code
 * slotReport} is the worker's report of its free slots for its task stream; null without one.
 */
public interface WorkerTransport extends AutoCloseable {
  /** The answer to a batch of completions: one outcome per item, and the tasks it took. */
  record CompletionReply(List<CompletionOutcome> results, List<Task> tasks) {}

  /** Waits up to {@code req.waitSeconds} for tasks; none when the wait ran out. */
  List<Task> poll(String workflow, PollRequest req, Duration timeout) throws InterruptedException;

  CompletionReply complete(String workflow, CompletionBatch batch, String slotReport);

  RetryOutcome retry(String workflow, long runId, RetryRequest req, String slotReport);

  RateLimitedOutcome rateLimited(
      String workflow, long runId, RateLimitedRequest req, String slotReport);

  /** Hands the held task to the workers with a step's labels (see {@link RouteRequest}). */
  RouteOutcome route(String workflow, long runId, RouteRequest req, String slotReport);

  ContinueAsNewOutcome continueAsNew(
      String workflow, long runId, ContinueAsNewRequest req, String slotReport);

  StartResult startChild(String workflow, long runId, ChildStartRequest req);

  JournalOutcome journal(String workflow, long runId, JournalRequest req);

  /**
   * The rows of a run's journal after the row {@code afterSeq} written at {@code afterCompletedAt}
   * (both null: the whole journal), for a task whose journal was withheld.
   */
  JournalTail journalTail(String workflow, long runId, Integer afterSeq, Instant afterCompletedAt);

  StreamWritten writeStream(String workflow, long runId, String stream, StreamWrite body);

  /** Sets some of a run's search attributes (a JSON object; null removes one). */
  void setAttributes(String workflow, long runId, JsonNode attributes);

  LeaseExtended extend(String workflow, long runId, LeaseRequest req);

  void registerSchedules(String workflow, ScheduleRegistration schedules);

  void setCodeConcurrency(String workflow, ConcurrencyLimit limit);

  /** Sets the throttle of a workflow's definition ({@code PUT .../code-throttle}). */
  void setCodeThrottle(String workflow, ThrottleSettings throttle);

  void setCodeRouting(String workflow, WorkerRouting routing);

  void setCancelOn(String workflow, CancelOnRules rules);

  /** Mints callback {@code name} of a run (a repeat answers the one minted before). */
  CallbackMinted createCallback(String workflow, long runId, String name, CallbackRequest req);

  /** The pending updates of the update task the request's lease holds, and the run's state. */
  UpdateTask takeUpdates(String workflow, long runId, UpdateTask.Request req);

  /** Answers the updates of the update task the request's lease holds, ending it. */
  UpdateAnswers.Outcome answerUpdates(String workflow, long runId, UpdateAnswers answers);

  /**
   * The worker stops taking tasks: a poll of {@code workflow} waiting in this process answers now,
   * with nothing (a server's poll in flight is left to end within its wait: it may already hold
   * tasks leased to it).
   */
  default void stopPolling(String workflow) {}

  /** Whether this transport can hold a task stream (only a server serves them). */
  boolean streams();

  @Override
  default void close() {}
}
