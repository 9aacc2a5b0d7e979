package dev.pgworkflows.workflows.internal.jdbc;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.host.EngineCore;
import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.engine.internal.runtime.WorkerIdentity;
import dev.pgworkflows.protocol.CallbackMinted;
import dev.pgworkflows.protocol.CallbackRequest;
import dev.pgworkflows.protocol.CancelOnRules;
import dev.pgworkflows.protocol.ChildStartRequest;
import dev.pgworkflows.protocol.CompletionAnswers;
import dev.pgworkflows.protocol.CompletionBatch;
import dev.pgworkflows.protocol.ConcurrencyLimit;
import dev.pgworkflows.protocol.ContinueAsNewOutcome;
import dev.pgworkflows.protocol.ContinueAsNewRequest;
import dev.pgworkflows.protocol.JournalOutcome;
import dev.pgworkflows.protocol.JournalRequest;
import dev.pgworkflows.protocol.JournalTail;
import dev.pgworkflows.protocol.LeaseExtended;
import dev.pgworkflows.protocol.LeaseRequest;
import dev.pgworkflows.protocol.Names;
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
import dev.pgworkflows.workflows.internal.link.WorkerTransport;
import dev.pgworkflows.workflows.internal.replay.Task;
import dev.pgworkflows.workflows.internal.sql.SchemaVersion;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * The worker protocol without a server: each call is the engine's own call ({@link WorkerCalls}),
 * made in this process over connections from the worker's {@link DataSource}. The records are the
 * protocol's, as a server would have read them from JSON; the answers and refusals are the ones a
 * server would have sent.
 */
public final class JdbcWorkerTransport implements WorkerTransport {
  private final DataSource dataSource;
  private final EngineCore engine;
  private final WorkerCalls calls;
  private final String workflow;
  private final WorkerIdentity identity;
  private volatile boolean stopped;

  /**
   * A transport for a worker of {@code workflow}, known to the workers listing as {@code identity};
   * an engine it starts over {@code dataSource} sends run spans to {@code openTelemetry}.
   */
  public JdbcWorkerTransport(
      DataSource dataSource,
      String workflow,
      WorkerIdentity identity,
      OpenTelemetry openTelemetry) {
    this.dataSource = dataSource;
    this.workflow = workflow;
    this.engine = LocalEngines.acquire(dataSource, SchemaVersion.Side.WORKER, openTelemetry);
    this.calls = engine.calls();
    this.identity = identity;
  }

  @Override
  public List<Task> poll(String workflow, PollRequest req, Duration timeout)
      throws InterruptedException {
    if (stopped) {
      return List.of();
    }
    List<dev.pgworkflows.protocol.Task> leased;
    try {
      leased =
          EngineErrors.call(() -> calls.poll(workflow, req, identity))
              .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw EngineErrors.translate(e.getCause());
    } catch (TimeoutException e) {
      return List.of();
    }
    return Tasks.of(leased);
  }

  @Override
  public CompletionReply complete(String workflow, CompletionBatch batch, String slotReport) {
    CompletionAnswers answers =
        EngineErrors.call(
                () ->
                    calls.complete(
                        workflow,
                        batch.completions(),
                        null,
                        batch.take(),
                        Clock.systemUTC().instant(),
                        identity))
            .answers();
    return new CompletionReply(
        answers.results(), answers.tasks() == null ? List.of() : Tasks.of(answers.tasks()));
  }

  @Override
  public RetryOutcome retry(String workflow, long runId, RetryRequest req, String slotReport) {
    return EngineErrors.call(() -> calls.retry(workflow, runId, req));
  }

  @Override
  public RouteOutcome route(String workflow, long runId, RouteRequest req, String slotReport) {
    return EngineErrors.call(() -> calls.route(workflow, runId, req));
  }

  @Override
  public RateLimitedOutcome rateLimited(
      String workflow, long runId, RateLimitedRequest req, String slotReport) {
    return EngineErrors.call(() -> calls.rateLimited(workflow, runId, req));
  }

  @Override
  public ContinueAsNewOutcome continueAsNew(
      String workflow, long runId, ContinueAsNewRequest req, String slotReport) {
    return EngineErrors.call(
        () -> calls.continueAsNew(workflow, runId, req, RunTraces.fromCurrentSpan()));
  }

  @Override
  public StartResult startChild(String workflow, long runId, ChildStartRequest req) {
    return EngineErrors.call(
        () -> calls.startChild(workflow, runId, req, RunTraces.fromCurrentSpan()));
  }

  @Override
  public JournalTail journalTail(
      String workflow, long runId, Integer afterSeq, Instant afterCompletedAt) {
    return EngineErrors.call(() -> calls.journalAfter(runId, afterSeq, afterCompletedAt));
  }

  @Override
  public JournalOutcome journal(String workflow, long runId, JournalRequest req) {
    return EngineErrors.call(() -> calls.journal(runId, req));
  }

  @Override
  public void setAttributes(String workflow, long runId, JsonNode attributes) {
    EngineErrors.call(() -> engine.searchCalls().set(workflow, runId, attributes.toString()));
  }

  @Override
  public StreamWritten writeStream(String workflow, long runId, String stream, StreamWrite body) {
    String answer =
        EngineErrors.call(() -> engine.streamWrites().write(workflow, runId, stream, body));
    return Tasks.read(answer, StreamWritten.class);
  }

  @Override
  public LeaseExtended extend(String workflow, long runId, LeaseRequest req) {
    return EngineErrors.call(() -> calls.extend(runId, req));
  }

  @Override
  public void registerSchedules(String workflow, ScheduleRegistration schedules) {
    EngineErrors.call(() -> engine.registrations().schedules(workflow, schedules));
  }

  @Override
  public void setCodeConcurrency(String workflow, ConcurrencyLimit limit) {
    EngineErrors.call(() -> engine.registrations().concurrency(workflow, limit));
  }

  @Override
  public void setCodeThrottle(String workflow, ThrottleSettings throttle) {
    EngineErrors.call(() -> engine.registrations().throttle(workflow, throttle));
  }

  @Override
  public void setCodeRouting(String workflow, WorkerRouting routing) {
    EngineErrors.call(() -> engine.registrations().routing(workflow, routing));
  }

  /** Minted by the engine itself: there is no server here, so the callback has no URL. */
  @Override
  public CallbackMinted createCallback(
      String workflow, long runId, String name, CallbackRequest req) {
    var m =
        EngineErrors.call(
            () -> engine.callbackCalls().create(workflow, runId, name, req.timeoutMs()));
    return new CallbackMinted(m.token(), null, m.expiresAt().toString(), m.created());
  }

  @Override
  public UpdateTask takeUpdates(String workflow, long runId, UpdateTask.Request req) {
    return EngineErrors.call(() -> engine.updateCalls().take(workflow, runId, req));
  }

  @Override
  public UpdateAnswers.Outcome answerUpdates(String workflow, long runId, UpdateAnswers answers) {
    return EngineErrors.call(() -> engine.updateCalls().answer(workflow, runId, answers));
  }

  @Override
  public void setCancelOn(String workflow, CancelOnRules rules) {
    EngineErrors.call(() -> engine.registrations().cancelOn(workflow, rules));
  }

  @Override
  public void stopPolling(String workflow) {
    stopped = true;
    // Every waiting poll of the workflow in this process answers now; another worker's polls
    // again at once.
    engine.longPoll().dismiss(Names.workflowQueue(workflow), terms -> true);
  }

  @Override
  public boolean streams() {
    return false;
  }

  @Override
  public void close() {
    engine.sightings().goodbye(workflow, identity.id());
    LocalEngines.release(dataSource);
  }
}
