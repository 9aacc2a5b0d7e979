package dev.pgworkflows.workflows.internal.http;

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
import dev.pgworkflows.protocol.RunAttributes;
import dev.pgworkflows.protocol.ScheduleRegistration;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.StreamWrite;
import dev.pgworkflows.protocol.StreamWritten;
import dev.pgworkflows.protocol.ThrottleSettings;
import dev.pgworkflows.protocol.UpdateAnswers;
import dev.pgworkflows.protocol.UpdateTask;
import dev.pgworkflows.protocol.WorkerRouting;
import dev.pgworkflows.workflows.internal.link.SlotReports;
import dev.pgworkflows.workflows.internal.link.WorkerTransport;
import dev.pgworkflows.workflows.internal.replay.Task;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * The worker protocol over HTTP: each call one request to the server's route for it. Polls carry
 * the worker's identity headers (the workers listing); the busy paths do not.
 */
public final class HttpWorkerTransport implements WorkerTransport {
  private final Transport transport;
  private final Transport named;

  /** {@code transport} for the busy paths, {@code named} (with identity headers) for polls. */
  public HttpWorkerTransport(Transport transport, Transport named) {
    this.transport = transport;
    this.named = named;
  }

  /** The transport with the worker's identity, which task streams use too. */
  public Transport named() {
    return named;
  }

  private static String run(String workflow, long runId) {
    return "/v1/workflows/" + workflow + "/runs/" + runId;
  }

  @Override
  public List<Task> poll(String workflow, PollRequest req, Duration timeout) {
    JsonNode resp = named.send("POST", "/v1/workflows/" + workflow + "/tasks/poll", req, timeout);
    return Task.all(resp.get("tasks"));
  }

  @Override
  public CompletionReply complete(String workflow, CompletionBatch batch, String slotReport) {
    // A batch that takes tasks names its worker, as a poll does: the tasks it may take depend on
    // who takes them (the runs that stick to it, its labels).
    JsonNode answer =
        (batch.take() == null ? transport : named)
            .post(
                "/v1/workflows/" + workflow + "/tasks/complete",
                batch,
                SlotReports.HEADER,
                slotReport);
    // Tasks are read by the worker's own reader (see Task.of), not as the protocol's Task.
    List<Task> tasks = Task.all(answer.get("tasks"));
    JsonNode results = answer.get("results");
    List<CompletionOutcome> outcomes =
        results == null || results.isNull()
            ? List.of()
            : Arrays.asList(Transport.read(results, CompletionOutcome[].class));
    return new CompletionReply(outcomes, tasks);
  }

  @Override
  public RouteOutcome route(String workflow, long runId, RouteRequest req, String slotReport) {
    return transport.post(
        run(workflow, runId) + "/route", req, SlotReports.HEADER, slotReport, RouteOutcome.class);
  }

  @Override
  public JournalTail journalTail(
      String workflow, long runId, Integer afterSeq, Instant afterCompletedAt) {
    String query =
        afterSeq == null ? "" : "?afterSeq=" + afterSeq + "&afterCompletedAt=" + afterCompletedAt;
    return transport.get(run(workflow, runId) + "/journal-tail" + query, JournalTail.class);
  }

  @Override
  public RetryOutcome retry(String workflow, long runId, RetryRequest req, String slotReport) {
    return transport.post(
        run(workflow, runId) + "/retry", req, SlotReports.HEADER, slotReport, RetryOutcome.class);
  }

  @Override
  public RateLimitedOutcome rateLimited(
      String workflow, long runId, RateLimitedRequest req, String slotReport) {
    return transport.post(
        run(workflow, runId) + "/rate-limited",
        req,
        SlotReports.HEADER,
        slotReport,
        RateLimitedOutcome.class);
  }

  @Override
  public ContinueAsNewOutcome continueAsNew(
      String workflow, long runId, ContinueAsNewRequest req, String slotReport) {
    return transport.post(
        run(workflow, runId) + "/continue-as-new",
        req,
        SlotReports.HEADER,
        slotReport,
        ContinueAsNewOutcome.class);
  }

  @Override
  public StartResult startChild(String workflow, long runId, ChildStartRequest req) {
    return transport.post(run(workflow, runId) + "/children", req, StartResult.class);
  }

  @Override
  public JournalOutcome journal(String workflow, long runId, JournalRequest req) {
    return transport.post(run(workflow, runId) + "/steps", req, JournalOutcome.class);
  }

  @Override
  public StreamWritten writeStream(String workflow, long runId, String stream, StreamWrite body) {
    return transport.post(run(workflow, runId) + "/streams/" + stream, body, StreamWritten.class);
  }

  @Override
  public void setAttributes(String workflow, long runId, JsonNode attributes) {
    transport.put(
        run(workflow, runId) + "/attributes",
        new RunAttributes(null, attributes.toString()),
        RunAttributes.class);
  }

  @Override
  public CallbackMinted createCallback(
      String workflow, long runId, String name, CallbackRequest req) {
    return transport.post(run(workflow, runId) + "/callbacks/" + name, req, CallbackMinted.class);
  }

  @Override
  public UpdateTask takeUpdates(String workflow, long runId, UpdateTask.Request req) {
    return transport.post(run(workflow, runId) + "/update-task", req, UpdateTask.class);
  }

  @Override
  public UpdateAnswers.Outcome answerUpdates(String workflow, long runId, UpdateAnswers answers) {
    return transport.post(
        run(workflow, runId) + "/update-answers", answers, UpdateAnswers.Outcome.class);
  }

  @Override
  public LeaseExtended extend(String workflow, long runId, LeaseRequest req) {
    return transport.post(run(workflow, runId) + "/lease", req, LeaseExtended.class);
  }

  @Override
  public void registerSchedules(String workflow, ScheduleRegistration schedules) {
    transport.post("/v1/workflows/" + workflow + "/schedules", schedules);
  }

  @Override
  public void setCodeConcurrency(String workflow, ConcurrencyLimit limit) {
    transport.send(
        "PUT", "/v1/workflows/" + workflow + "/code-concurrency", limit, Duration.ofSeconds(30));
  }

  @Override
  public void setCodeThrottle(String workflow, ThrottleSettings throttle) {
    transport.send(
        "PUT", "/v1/workflows/" + workflow + "/code-throttle", throttle, Duration.ofSeconds(30));
  }

  @Override
  public void setCodeRouting(String workflow, WorkerRouting routing) {
    transport.send(
        "PUT", "/v1/workflows/" + workflow + "/code-routing", routing, Duration.ofSeconds(30));
  }

  @Override
  public void setCancelOn(String workflow, CancelOnRules rules) {
    transport.send(
        "PUT", "/v1/workflows/" + workflow + "/cancel-on", rules, Duration.ofSeconds(30));
  }

  @Override
  public boolean streams() {
    return true;
  }
}
