package dev.pgworkflows.workflows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.SignalOutcome;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.StartTiming;
import dev.pgworkflows.protocol.Workers;
import dev.pgworkflows.workflows.internal.http.HttpRunsLink;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.jdbc.EngineLibrary;
import dev.pgworkflows.workflows.internal.jdbc.JdbcRunsLink;
import dev.pgworkflows.workflows.internal.link.RunsLink;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;

/**
 * The entry point of the client: starts runs and signals them, and reaches the rest by what it
 * addresses: {@link #runs()} (read, await, cancel, pause, restart, fork, journals, state, streams,
 * blockers), {@link #workflows()} (a workflow's pause and concurrency limits), {@link
 * #rateLimits()}, {@link #schedules()} and {@link #workers()}. Thread-safe; one per application is
 * enough.
 *
 * <p>A start that returned is durable: the run exists and will be executed by some worker, even if
 * this process dies right after. Starts made by several threads at the same time share requests and
 * commits (see {@code POST /v1/workflows/{name}/runs/batch}); a lone start is sent at once.
 */
public final class WorkflowClient implements AutoCloseable {
  /** Null for a client over JDBC, which makes only the calls {@link RunsLink} has. */
  private final Transport transport;

  private final RunsLink runs;
  private final Runs runsView;
  private final Workflows workflows;
  private final RateLimits rateLimits;
  private final Schedules schedules;
  private final Topics topics;
  private final ClientUpdates updates;

  private WorkflowClient(Transport transport, RunsLink runs) {
    this.updates = new ClientUpdates(runs);
    this.transport = transport;
    this.runs = runs;
    this.runsView = new Runs(transport, runs);
    this.workflows = transport == null ? null : new Workflows(transport);
    this.rateLimits = transport == null ? null : new RateLimits(transport);
    this.schedules = transport == null ? null : new Schedules(transport);
    this.topics = transport == null ? null : new Topics(transport);
  }

  /** The runs: read, list, await, cancel, pause, resume, restart and fork them, and look inside. */
  public Runs runs() {
    return runsView;
  }

  /** Each workflow's pause and concurrency limits, kept by the server. */
  public Workflows workflows() {
    server(transport, "workflows");
    return workflows;
  }

  /** The rate limits per concurrency key, kept by the server. */
  public RateLimits rateLimits() {
    server(transport, "rateLimits");
    return rateLimits;
  }

  /** Topics: workflows subscribed to topic patterns (in batches, too), and publishing. */
  public Topics topics() {
    server(transport, "topics");
    return topics;
  }

  /** The server's cron schedules: list, read, make, change, pause, resume, delete. */
  public Schedules schedules() {
    server(transport, "schedules");
    return schedules;
  }

  /**
   * A client with no server between it and its database: {@link #start}, {@link #signal}, {@link
   * Runs#get}, {@link Runs#chainLast}, {@link Runs#awaitResult} and {@link Runs#cancel} are the
   * engine's own calls, made in this process over connections from {@code dataSource}; the
   * operator's calls (lists, journals, limits, pauses, schedules, streams, workers) are a server's
   * and throw {@link UnsupportedOperationException} here. Close it when done: the engine in this
   * process stops when its last client and worker have closed.
   */
  public static WorkflowClient connect(DataSource dataSource) {
    if (dataSource == null) {
      throw new IllegalArgumentException("dataSource must not be null");
    }
    EngineLibrary.require();
    return new WorkflowClient(null, new JdbcRunsLink(dataSource));
  }

  /**
   * Lets go of what the client holds: over JDBC, its share of the engine in this process. A client
   * over HTTP holds nothing.
   */
  @Override
  public void close() {
    updates.close();
    runs.close();
  }

  /** The server's transport, for the calls only a server answers. */
  static Transport server(Transport transport, String call) {
    if (transport == null) {
      throw new UnsupportedOperationException(
          call
              + " is answered by a pgworkflows server; this client reaches the database directly"
              + " (WorkflowClient.connect(DataSource)) and makes only starts, signals, reads of a"
              + " run, awaits and cancels");
    }
    return transport;
  }

  public static WorkflowClient connect(String url) {
    return connect(url, null);
  }

  /**
   * A client that sends {@code token}. What it may do is the token's scopes: {@code start} to start
   * and signal, {@code read} to get, list, read journals and await results, {@code admin} to
   * cancel. An application that only starts and reads runs is given a token with {@code
   * start,read}; one that also cancels keeps a second client with an {@code admin} token for that.
   * Workers take their own token ({@link WorkerOptions#token}, scope {@code worker}). A call the
   * token may not make throws {@link ApiException} with status 403 naming the scope it lacks.
   */
  public static WorkflowClient connect(String url, String token) {
    if (url == null || !(url.startsWith("http://") || url.startsWith("https://"))) {
      throw new IllegalArgumentException("url must be an http:// or https:// URL, got " + url);
    }
    Transport t = new Transport(url, token);
    return new WorkflowClient(t, new HttpRunsLink(t));
  }

  /**
   * Result of a signal: {@code outcome} is {@code delivered} (it fit the run's wait), {@code
   * buffered} (kept in the run's inbox for a later wait), {@code cancelled} (one of the workflow's
   * cancel-on rules names it, and it cancelled the run) or {@code duplicate} (its idempotency key
   * was sent before; nothing new stored).
   */
  public record SignalResult(long signalId, String outcome) {
    public boolean delivered() {
      return "delivered".equals(outcome);
    }

    public boolean buffered() {
      return "buffered".equals(outcome);
    }

    public boolean duplicate() {
      return "duplicate".equals(outcome);
    }

    /** Whether the signal cancelled the run, by one of its workflow's cancel-on rules. */
    public boolean cancelled() {
      return "cancelled".equals(outcome);
    }
  }

  /** Starts a run of {@code workflow} with {@code input}, due at once, with no options. */
  public Started start(String workflow, Object input) {
    return start(workflow, input, StartOptions.NONE);
  }

  /** Starts a run of {@code workflow} with {@code input} and {@code options}. */
  public Started start(String workflow, Object input, StartOptions options) {
    Workflow.checkName(workflow);
    if (options == null) {
      throw new IllegalArgumentException("options must not be null");
    }
    StartResult r = runs.start(workflow, request(input, options));
    return new Started(
        workflow,
        r.runId(),
        RunStatus.of(r.status()),
        r.created(),
        Boolean.TRUE.equals(r.debounced()),
        Admission.of(r.admission()),
        r.cancelledRuns());
  }

  /** The start request of {@code input} with {@code options}. */
  static StartRequest request(Object input, StartOptions options) {
    return new StartRequest(
            Transport.JSON.valueToTree(input),
            options.version(),
            options.idempotencyKey(),
            options.retentionDays(),
            timing(options))
        .withFlow(options.concurrencyKey(), options.priority())
        .withAttributes(
            options.attributes() == null ? null : Transport.JSON.valueToTree(options.attributes()));
  }

  /** The options' timing as the start request carries it. */
  private static StartTiming timing(StartOptions o) {
    return new StartTiming(
        o.startAt(),
        o.delay() == null ? null : o.delay().toMillis(),
        o.deadlineAt(),
        o.deadline() == null ? null : o.deadline().toMillis(),
        o.debounceKey(),
        o.debounceWindow() == null ? null : o.debounceWindow().toMillis());
  }

  /**
   * Starts a run of a definition, with its retention and deadline unless the options say otherwise.
   */
  public <I, O> Started start(Workflow<I, O> workflow, I input, StartOptions options) {
    return start(workflow.name(), input, options.withDefaultsOf(workflow));
  }

  public <I, O> Started start(Workflow<I, O> workflow, I input) {
    return start(workflow, input, StartOptions.NONE);
  }

  /**
   * Sends {@code payload} as event {@code event} to a running run: delivered when it fits the run's
   * wait, otherwise kept for the first later wait it fits. A run that has ended refuses it ({@link
   * ApiException} 409).
   */
  public SignalResult signal(String workflow, long runId, String event, Object payload) {
    return signal(workflow, runId, event, payload, null);
  }

  /** As {@link #signal(String, long, String, Object)}; a repeated key is stored once. */
  public SignalResult signal(
      String workflow, long runId, String event, Object payload, String idempotencyKey) {
    Workflow.checkName(workflow);
    JsonNode body = Transport.JSON.valueToTree(payload);
    SignalOutcome r = runs.signal(workflow, runId, event, body, idempotencyKey);
    return new SignalResult(r.signalId(), r.outcome());
  }

  /**
   * Sends update {@code update} with {@code input} to a run and waits up to a minute for the answer
   * of its workflow's handler ({@link Workflow.Builder#onUpdate}), as {@code type} ({@code
   * Void.class} for none). A refusal (its validator threw, or no handler has the name), a run that
   * has ended or ends first: {@link ApiException} 409; a handler that threw: {@link
   * UpdateFailedException}; no answer in time: {@link UpdatePendingException}.
   */
  public <R> R update(String workflow, long runId, String update, Object input, Class<R> type) {
    return updates.update(workflow, runId, update, input, type, null);
  }

  /** As {@link #update(String, long, String, Object, Class)}, with a timeout and a key. */
  public <R> R update(
      String workflow,
      long runId,
      String update,
      Object input,
      Class<R> type,
      UpdateOptions options) {
    return updates.update(workflow, runId, update, input, type, options);
  }

  /**
   * As {@link #update(String, long, String, Object, Class, UpdateOptions)}, without blocking: the
   * future completes with the answer or the exception the blocking call would throw.
   */
  public <R> CompletableFuture<R> updateAsync(
      String workflow,
      long runId,
      String update,
      Object input,
      Class<R> type,
      UpdateOptions options) {
    return updates.updateAsync(workflow, runId, update, input, type, options);
  }

  /**
   * Update-with-start: starts a run of {@code workflow} (or finds the one the options' idempotency
   * key, which is required, names) and sends it update {@code update}, in one transaction, then
   * waits for the answer as {@link #update(String, long, String, Object, Class, UpdateOptions)}
   * does. A cart or a session made on its first use is one call.
   */
  public <I, R> StartedUpdate<R> updateWithStart(
      Workflow<I, ?> workflow,
      I input,
      StartOptions options,
      String update,
      Object updateInput,
      Class<R> type,
      UpdateOptions updateOptions) {
    if (options == null || options.idempotencyKey() == null) {
      throw new IllegalArgumentException(
          "an update-with-start needs StartOptions with an idempotencyKey: it names the run");
    }
    return updates.updateWithStart(
        workflow.name(),
        request(input, options.withDefaultsOf(workflow)),
        update,
        updateInput,
        type,
        updateOptions);
  }

  /** The workers of every workflow seen lately (within the server's worker expiry). */
  public List<WorkerInfo> workers() {
    return workers(server(transport, "workers").get("/v1/workers", Workers.class));
  }

  /** The workers of one workflow seen lately. */
  public List<WorkerInfo> workers(String workflow) {
    Workflow.checkName(workflow);
    return workers(
        server(transport, "workers").get("/v1/workers?workflow=" + workflow, Workers.class));
  }

  private static List<WorkerInfo> workers(Workers r) {
    return r.workers().stream()
        .map(
            w ->
                new WorkerInfo(
                    w.id(),
                    w.workflow(),
                    w.host(),
                    w.versions(),
                    w.slots(),
                    w.mode(),
                    w.server(),
                    w.lastSeen(),
                    w.labels() == null ? Map.of() : Map.copyOf(w.labels())))
        .toList();
  }
}
