package dev.pgworkflows.workflows;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.pgworkflows.protocol.ConcurrencyLimit;
import dev.pgworkflows.protocol.ForkRequest;
import dev.pgworkflows.protocol.KeyConcurrencyLimit;
import dev.pgworkflows.protocol.RateLimit;
import dev.pgworkflows.protocol.RestartRequest;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.RunStateLimits;
import dev.pgworkflows.protocol.SignalOutcome;
import dev.pgworkflows.protocol.Signals;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.StartTiming;
import dev.pgworkflows.protocol.Workers;
import dev.pgworkflows.workflows.internal.http.HttpRunsLink;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.jdbc.EngineLibrary;
import dev.pgworkflows.workflows.internal.jdbc.JdbcRunsLink;
import dev.pgworkflows.workflows.internal.link.RunsLink;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Starts, signals, inspects and cancels runs. Thread-safe; one per application is enough.
 *
 * <p>A start that returned is durable: the run exists and will be executed by some worker, even if
 * this process dies right after. Starts made by several threads at the same time share requests and
 * commits (see {@code POST /v1/workflows/{name}/runs/batch}); a lone start is sent at once.
 */
public final class WorkflowClient implements AutoCloseable {
  /** Null for a client over JDBC, which makes only the calls {@link RunsLink} has. */
  private final Transport transport;

  private final RunsLink runs;
  private final Schedules schedules;

  private WorkflowClient(Transport transport, RunsLink runs) {
    this.transport = transport;
    this.runs = runs;
    this.schedules = transport == null ? null : new Schedules(transport);
  }

  /** The server's cron schedules: list, read, make, change, pause, resume, delete. */
  public Schedules schedules() {
    http("schedules");
    return schedules;
  }

  /**
   * A client with no server between it and its database: {@link #start}, {@link #signal}, {@link
   * #get}, {@link #chainLast}, {@link #awaitResult} and {@link #cancel} are the engine's own calls,
   * made in this process over connections from {@code dataSource}; the operator's calls (lists,
   * journals, limits, pauses, schedules, streams) are a server's and throw {@link
   * UnsupportedOperationException} here. Close it when done: the engine in this process stops when
   * its last client and worker have closed.
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
    runs.close();
  }

  /** The server's transport, for the calls only a server answers. */
  private Transport http(String call) {
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
   * buffered} (kept in the run's inbox for a later wait) or {@code duplicate} (its idempotency key
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
  }

  /** One page of runs, newest first; {@code nextCursor} is empty on the last page. */
  public record Page(List<RunInfo> runs, Optional<String> nextCursor) {}

  public Started start(String workflow, Object input) {
    return start(workflow, input, StartOptions.NONE);
  }

  public Started start(String workflow, Object input, StartOptions options) {
    Workflow.checkName(workflow);
    StartRequest body =
        new StartRequest(
                Transport.JSON.valueToTree(input),
                options.version(),
                options.idempotencyKey(),
                options.retentionDays(),
                timing(options))
            .withFlow(options.concurrencyKey(), options.priority());
    StartResult r = runs.start(workflow, body);
    return new Started(
        workflow,
        r.runId(),
        RunStatus.of(r.status()),
        r.created(),
        Boolean.TRUE.equals(r.debounced()));
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
    StartOptions o =
        options.retentionDays() == null
            ? options.withRetentionDays((int) workflow.retention().toDays())
            : options;
    if (o.deadline() == null && o.deadlineAt() == null && workflow.deadline() != null) {
      o = o.withDeadline(workflow.deadline());
    }
    return start(workflow.name(), input, o);
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

  /** The run's signals in the order they were sent, buffered and delivered. */
  public List<SignalInfo> signals(String workflow, long runId) {
    Workflow.checkName(workflow);
    Signals r =
        http("signals")
            .get("/v1/workflows/" + workflow + "/runs/" + runId + "/signals", Signals.class);
    return r.signals().stream()
        .map(
            x ->
                new SignalInfo(
                    x.signalId(),
                    x.event(),
                    tree(x.payload()),
                    x.idempotencyKey(),
                    x.sentAt(),
                    x.deliveredAt(),
                    x.deliveredTo()))
        .toList();
  }

  /**
   * Why the run is not running now, the most binding reason first; an empty list when its task is
   * due and about to be handed out. Reading it changes nothing.
   */
  public List<Blocker> blockers(String workflow, long runId) {
    Workflow.checkName(workflow);
    JsonNode answer =
        http("blockers").get("/v1/workflows/" + workflow + "/runs/" + runId + "/blockers");
    List<Blocker> out = new ArrayList<>();
    for (JsonNode b : answer.path("blockers")) {
      Map<String, Object> data = new LinkedHashMap<>();
      b.properties()
          .forEach(
              e -> {
                if (!e.getKey().equals("kind") && !e.getKey().equals("text")) {
                  data.put(e.getKey(), Transport.JSON.convertValue(e.getValue(), Object.class));
                }
              });
      out.add(new Blocker(b.path("kind").asText(), b.path("text").asText(), data));
    }
    return out;
  }

  /**
   * The run's stream {@code stream}, read from offset 0 ({@link StreamReader#from} for another) and
   * followed live: iterating it yields each entry as it is written, its value read as {@code type},
   * and ends once the stream is closed or the run has ended. Needs the {@code read} scope.
   */
  public <T> StreamReader<T> stream(String workflow, long runId, String stream, Class<T> type) {
    return streamOf(workflow, runId, stream, type);
  }

  /** As {@link #stream(String, long, String, Class)}, for a generic value type. */
  public <T> StreamReader<T> stream(String workflow, long runId, String stream, TypeRef<T> type) {
    return streamOf(workflow, runId, stream, type.type());
  }

  /** As {@link #stream(String, long, String, Class)}, for a run this client started. */
  public <T> StreamReader<T> stream(Started run, String stream, Class<T> type) {
    return stream(run.workflow(), run.runId(), stream, type);
  }

  private <T> StreamReader<T> streamOf(
      String workflow, long runId, String stream, java.lang.reflect.Type type) {
    Workflow.checkName(workflow);
    if (!dev.pgworkflows.protocol.Names.isStreamName(stream)) {
      throw new IllegalArgumentException(
          "stream name \""
              + stream
              + "\" must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\", not dots alone");
    }
    return new StreamReader<>(
        http("stream"),
        "/v1/workflows/" + workflow + "/runs/" + runId + "/streams/" + stream,
        type,
        0);
  }

  /** As {@link #blockers(String, long)}, for a run this client started. */
  public List<Blocker> blockers(Started run) {
    return blockers(run.workflow(), run.runId());
  }

  /** The workers of every workflow seen lately (within the server's worker expiry). */
  public List<WorkerInfo> workers() {
    return workers(http("workers").get("/v1/workers", Workers.class));
  }

  /** The workers of one workflow seen lately. */
  public List<WorkerInfo> workers(String workflow) {
    Workflow.checkName(workflow);
    return workers(http("workers").get("/v1/workers?workflow=" + workflow, Workers.class));
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
                    w.lastSeen()))
        .toList();
  }

  public RunInfo get(String workflow, long runId) {
    Workflow.checkName(workflow);
    return runInfo(runs.get(workflow, runId));
  }

  /** Runs of a workflow, newest first; status may be null for all. */
  public Page list(String workflow, RunStatus status, String cursor, int limit) {
    Workflow.checkName(workflow);
    StringBuilder q = new StringBuilder("?limit=").append(limit);
    if (status != null) {
      q.append("&status=").append(status.wire());
    }
    if (cursor != null) {
      q.append("&cursor=").append(encode(cursor));
    }
    RunPage r = http("list").get("/v1/workflows/" + workflow + "/runs" + q, RunPage.class);
    List<RunInfo> runs =
        r.runs() == null ? null : r.runs().stream().map(WorkflowClient::runInfo).toList();
    return new Page(runs, Optional.ofNullable(r.nextCursor()));
  }

  /** Cancels a running run; false when it had already ended. */
  /**
   * Sets how many runs of each concurrency key of {@code workflow} may run at once ({@code null}
   * removes the limit); runs over it wait, oldest start first, and start as slots free. Needs scope
   * {@code admin}. See {@link StartOptions#concurrencyKey}.
   */
  public void setConcurrencyLimit(String workflow, Integer limit) {
    Workflow.checkName(workflow);
    if (limit != null && (limit < 1 || limit > 100_000)) {
      throw new IllegalArgumentException("limit must be between 1 and 100000");
    }
    http("setConcurrencyLimit")
        .send(
            "PUT",
            "/v1/workflows/" + workflow + "/concurrency",
            new ConcurrencyLimit(null, limit),
            Duration.ofSeconds(30));
  }

  /**
   * Sets how many runs of {@code workflow} with concurrency key {@code key} may run at once, in
   * place of the workflow's limit for every other key ({@code null} removes the key's own limit, so
   * the workflow's holds again). Runs of the key waiting for a slot that the new limit lets through
   * start at once. Needs scope {@code admin}.
   */
  public void setKeyConcurrencyLimit(String workflow, String key, Integer limit) {
    Workflow.checkName(workflow);
    if (key == null || key.isEmpty() || key.length() > 255) {
      throw new IllegalArgumentException("key must be 1 to 255 characters");
    }
    if (limit != null && (limit < 1 || limit > 100_000)) {
      throw new IllegalArgumentException("limit must be between 1 and 100000");
    }
    String path =
        "/v1/workflows/"
            + workflow
            + "/concurrency/"
            + URLEncoder.encode(key, StandardCharsets.UTF_8).replace("+", "%20");
    if (limit == null) {
      try {
        http("setKeyConcurrencyLimit").send("DELETE", path, null, Duration.ofSeconds(30));
      } catch (ApiException e) {
        if (e.status() != 404) {
          throw e;
        }
      }
      return;
    }
    http("setKeyConcurrencyLimit")
        .send("PUT", path, new KeyConcurrencyLimit(null, null, limit), Duration.ofSeconds(30));
  }

  /**
   * Lets runs with concurrency key {@code key} be handed out at most {@code limit} times per {@code
   * period} (a task's start or resumption each takes one); {@code limit} null removes it. Needs
   * scope {@code admin}.
   */
  public void setRateLimit(String key, Integer limit, Duration period) {
    if (key == null || key.isEmpty() || key.length() > 255) {
      throw new IllegalArgumentException("key must be 1 to 255 characters");
    }
    http("setRateLimit")
        .send(
            "PUT",
            "/v1/rate-limits/" + URLEncoder.encode(key, StandardCharsets.UTF_8).replace("+", "%20"),
            new RateLimit(null, limit, limit == null ? null : period.toMillis(), null),
            Duration.ofSeconds(30));
  }

  public boolean cancel(String workflow, long runId) {
    Workflow.checkName(workflow);
    return runs.cancel(workflow, runId).cancelled();
  }

  /**
   * Pauses {@code workflow}: starts are still taken, but none of its runs is handed out until
   * {@link #resumeWorkflow}; a step running at the pause finishes and its run then waits. Needs
   * scope {@code admin}.
   */
  public void pauseWorkflow(String workflow) {
    Workflow.checkName(workflow);
    http("pauseWorkflow").post("/v1/workflows/" + workflow + "/pause", null);
  }

  /** Resumes a paused workflow: its due runs are handed out again. Needs scope {@code admin}. */
  public void resumeWorkflow(String workflow) {
    Workflow.checkName(workflow);
    http("resumeWorkflow").post("/v1/workflows/" + workflow + "/resume", null);
  }

  /**
   * Pauses a running run: it is handed out only after {@link #resume}. Its sleeps, wait timeouts
   * and retry backoffs still come due meanwhile; a step running at the pause finishes and is
   * journaled. Needs scope {@code admin}; an {@link ApiException} with status 409 for a run that
   * has ended.
   */
  public RunInfo pause(String workflow, long runId) {
    return runAction(workflow, runId, "/pause", null);
  }

  /** Resumes a paused run: whatever came due during the pause is due now. */
  public RunInfo resume(String workflow, long runId) {
    return runAction(workflow, runId, "/resume", null);
  }

  /**
   * Restarts a failed, cancelled or timed-out run from {@code fromStep}: that step's journal row
   * and every later one are set aside (kept, see {@link #steps(String, long, boolean)}), the
   * earlier steps replay from the journal without running, and the run is running again with its
   * error cleared. Needs scope {@code admin}; an {@link ApiException} with status 409 for a run in
   * another state, 400 for a step that is not in its journal.
   */
  public RunInfo restart(String workflow, long runId, String fromStep) {
    return runAction(workflow, runId, "/restart", new RestartRequest(fromStep));
  }

  /**
   * Forks a run from {@code fromStep} into a new run of the same workflow and version, with the
   * origin's input and a copy of the journal rows before that step (they replay without running).
   * The new run's {@link RunInfo#forkedFrom()} names the origin. Needs scope {@code admin}.
   */
  public RunInfo fork(String workflow, long runId, String fromStep) {
    return runAction(workflow, runId, "/fork", new ForkRequest(fromStep, null));
  }

  /** As {@link #fork(String, long, String)}, with {@code input} in place of the origin's. */
  public RunInfo fork(String workflow, long runId, String fromStep, Object input) {
    JsonNode in = input == null ? NullNode.getInstance() : Transport.JSON.valueToTree(input);
    return runAction(workflow, runId, "/fork", new ForkRequest(fromStep, in));
  }

  private RunInfo runAction(String workflow, long runId, String action, Object body) {
    Workflow.checkName(workflow);
    return runInfo(
        http("pause, resume, restart and fork")
            .post("/v1/workflows/" + workflow + "/runs/" + runId + action, body, Run.class));
  }

  /**
   * The run's journal, in step order. (The protocol has no record of the steps answer yet: the rows
   * are read straight into {@link StepInfo}.)
   */
  public List<StepInfo> steps(String workflow, long runId) {
    return steps(workflow, runId, false);
  }

  /**
   * The run's journal, in step order; with {@code setAside}, also the rows restarts set aside (each
   * {@link StepInfo#setAside()}, before the row that replaced it).
   */
  public List<StepInfo> steps(String workflow, long runId, boolean setAside) {
    Workflow.checkName(workflow);
    JsonNode r =
        http("steps")
            .get(
                "/v1/workflows/"
                    + workflow
                    + "/runs/"
                    + runId
                    + "/steps"
                    + (setAside ? "?setAside=true" : ""));
    JavaType listType =
        Transport.JSON.getTypeFactory().constructCollectionType(List.class, StepInfo.class);
    return Transport.JSON.convertValue(r.get("steps"), listType);
  }

  /** The most runs {@link #chain} reads. */
  private static final int CHAIN_CAP = 10_000;

  /**
   * The runs of the chain {@code runId} belongs to (runs linked by continue-as-new), first to last;
   * a run in no chain is a chain of one. Retention takes a chain's ended runs one by one, except
   * its first while it goes on, so a long chain lists what remains. Reads pages up to the first
   * 10,000 runs; {@link #chainLast} finds the last run of any chain.
   */
  public List<RunInfo> chain(String workflow, long runId) {
    Workflow.checkName(workflow);
    List<RunInfo> runs = new ArrayList<>();
    String cursor = null;
    do {
      RunPage page =
          http("chain")
              .get(
                  "/v1/workflows/"
                      + workflow
                      + "/runs/"
                      + runId
                      + "/chain?limit="
                      + Math.min(1000, CHAIN_CAP - runs.size())
                      + (cursor == null ? "" : "&cursor=" + encode(cursor)),
                  RunPage.class);
      page.runs().forEach(r -> runs.add(runInfo(r)));
      cursor = page.nextCursor();
    } while (cursor != null && runs.size() < CHAIN_CAP);
    return runs;
  }

  /**
   * The last run of the chain {@code runId} belongs to: the one running while the chain goes on
   * (the run a signal or cancel sent to any run of the chain reaches), and the chain's result at
   * its end. A run in no chain is its own last run.
   */
  public RunInfo chainLast(String workflow, long runId) {
    Workflow.checkName(workflow);
    return runInfo(runs.chainLast(workflow, runId));
  }

  /**
   * Waits for the run to end and returns its output as {@code type}. A run that continued as new is
   * followed to the last run of its chain, whose result this is (the run's own view, output {@code
   * {"continuedTo": <runId>}}, is {@link #get}'s). Throws {@link WorkflowFailedException} when it
   * failed, was cancelled or timed out, and {@link WorkflowException} when {@code timeout} passes
   * first (however many runs the chain went through meanwhile).
   */
  public <O> O awaitResult(String workflow, long runId, Class<O> type, Duration timeout) {
    return awaitResult(workflow, runId, TypeRef.of(type), timeout);
  }

  public <O> O awaitResult(String workflow, long runId, TypeRef<O> type, Duration timeout) {
    // An interval, so measured by System.nanoTime; a timeout beyond a century waits for good.
    long budget =
        timeout.compareTo(Duration.ofDays(36_500)) > 0 ? Long.MAX_VALUE / 2 : timeout.toNanos();
    long deadline = System.nanoTime() + budget;
    long pauseMs = 10;
    long current = runId;
    while (true) {
      RunInfo run = get(workflow, current);
      if (run.continuedTo() != null) {
        // Continued as new: the chain's result is its last run's, found in one look-up (runs in
        // the middle of the chain may be gone to retention).
        run = chainLast(workflow, current);
        if (run.runId() != current) {
          current = run.runId();
          pauseMs = 10;
        }
      }
      if (run.continuedTo() == null && run.status() == RunStatus.COMPLETED) {
        JavaType jt = Transport.JSON.getTypeFactory().constructType(type.type());
        return run.output() == null || run.output().isNull()
            ? null
            : Transport.JSON.convertValue(run.output(), jt);
      }
      if (run.continuedTo() == null && run.status().isTerminal()) {
        throw new WorkflowFailedException(run);
      }
      if (System.nanoTime() - deadline > 0) {
        throw new WorkflowException(
            "run "
                + runId
                + " of "
                + workflow
                + " did not finish within "
                + timeout
                + (current == runId ? "" : " (its chain is at run " + current + ")"));
      }
      try {
        Thread.sleep(pauseMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new WorkflowException("interrupted while awaiting run " + runId, e);
      }
      pauseMs = Math.min(pauseMs * 2, 250);
    }
  }

  /**
   * The run's state (see {@link RunState}): each key set and not removed, with its value, in key
   * order. What a run's body and steps journaled so far; a step that did not commit shows nothing.
   */
  public Map<String, JsonNode> state(String workflow, long runId) {
    Workflow.checkName(workflow);
    JsonNode answer = http("state").get("/v1/workflows/" + workflow + "/runs/" + runId + "/state");
    Map<String, JsonNode> out = new LinkedHashMap<>();
    answer.path("state").properties().forEach(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }

  /** As {@link #state(String, long)}, for a run this client started. */
  public Map<String, JsonNode> state(Started run) {
    return state(run.workflow(), run.runId());
  }

  /**
   * The value of state {@code key} of the run as {@code type}, waiting up to {@code timeout} for it
   * to be set (the server answers as soon as it is); empty when it is not set by then, or the run
   * ended without setting it. {@link Duration#ZERO} reads without waiting.
   */
  public <T> Optional<T> awaitState(
      String workflow, long runId, String key, Class<T> type, Duration timeout) {
    return awaitState(workflow, runId, key, TypeRef.of(type), timeout);
  }

  public <T> Optional<T> awaitState(
      String workflow, long runId, String key, TypeRef<T> type, Duration timeout) {
    Workflow.checkName(workflow);
    String problem = RunStateLimits.keyProblem("key", key);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
    long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
    String path = "/v1/workflows/" + workflow + "/runs/" + runId + "/state/" + key;
    while (true) {
      long leftMs = Math.max(0, (deadline - System.nanoTime()) / 1_000_000);
      // Long polls of at most the server's 30 s; a wait of less than a second rounds up to one.
      long wait = leftMs == 0 ? 0 : Math.min(30, Math.max(1, leftMs / 1000));
      JsonNode answer =
          http("awaitState")
              .send("GET", path + "?waitSeconds=" + wait, null, Duration.ofSeconds(wait + 30));
      if (answer.path("set").asBoolean()) {
        JavaType jt = Transport.JSON.getTypeFactory().constructType(type.type());
        JsonNode v = answer.get("value");
        return Optional.ofNullable(
            v == null || v.isNull() ? null : Transport.JSON.convertValue(v, jt));
      }
      if (wait == 0
          || System.nanoTime() - deadline >= 0
          || !answer.path("running").asBoolean(true)) {
        return Optional.empty();
      }
    }
  }

  /**
   * As {@link #awaitState(String, long, String, Class, Duration)}, for a run this client started.
   */
  public <T> Optional<T> awaitState(Started run, String key, Class<T> type, Duration timeout) {
    return awaitState(run.workflow(), run.runId(), key, type, timeout);
  }

  /** The run as the public API shows it, its JSON text read as trees. */
  private static RunInfo runInfo(Run r) {
    return new RunInfo(
        r.runId(),
        r.workflow(),
        r.version(),
        r.status() == null ? null : RunStatus.of(r.status()),
        tree(r.input()),
        tree(r.output()),
        tree(r.error()),
        r.idempotencyKey(),
        r.retentionDays(),
        r.waitingFor() == null
            ? null
            : new RunInfo.Waiting(
                r.waitingFor().step(), r.waitingFor().event(), tree(r.waitingFor().match())),
        r.startedAt(),
        r.completedAt(),
        r.parent() == null
            ? null
            : new RunInfo.Parent(r.parent().runId(), r.parent().workflow(), r.parent().step()),
        r.children() == null
            ? List.of()
            : r.children().stream()
                .map(
                    c ->
                        new RunInfo.Child(
                            c.runId(), c.workflow(), RunStatus.of(c.status()), c.step()))
                .toList(),
        r.dueAt(),
        r.deadlineAt(),
        r.concurrencyKey(),
        r.priority(),
        r.paused(),
        r.forkedFrom() == null
            ? null
            : new RunInfo.ForkedFrom(r.forkedFrom().runId(), r.forkedFrom().step()),
        r.continuedFrom(),
        r.continuedTo());
  }

  /** JSON text as a tree; null stays null, the text {@code null} is a NullNode. */
  private static JsonNode tree(String json) {
    if (json == null) {
      return null;
    }
    try {
      return Transport.JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw new WorkflowException("the server sent JSON that does not parse: " + e.getMessage(), e);
    }
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
