package dev.pgworkflows.workflows;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.pgworkflows.protocol.ForkRequest;
import dev.pgworkflows.protocol.RestartRequest;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.RunStateLimits;
import dev.pgworkflows.protocol.SearchAttribute;
import dev.pgworkflows.protocol.Signals;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.link.RunsLink;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The runs a client reaches ({@link WorkflowClient#runs()}): read, listed, found by a query,
 * awaited, cancelled, paused, resumed, restarted and forked, with their journals, signals, state,
 * streams and blockers. Over JDBC ({@link WorkflowClient#connect(DataSource)}) {@link #get}, {@link
 * #chainLast}, {@link #awaitResult}, {@link #cancel}, {@link #search}, {@link #count} and the
 * search attributes' calls are the engine's own calls; the rest are a server's and throw {@link
 * UnsupportedOperationException} there.
 */
public final class Runs {
  /** Null for a client over JDBC. */
  private final Transport transport;

  private final RunsLink runs;

  Runs(Transport transport, RunsLink runs) {
    this.transport = transport;
    this.runs = runs;
  }

  /** One page of runs, newest first; {@code nextCursor} is empty on the last page. */
  public record Page(List<RunInfo> runs, Optional<String> nextCursor) {}

  private Transport http(String call) {
    return WorkflowClient.server(transport, call);
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
    List<RunInfo> runs = r.runs() == null ? null : r.runs().stream().map(Runs::runInfo).toList();
    return new Page(runs, Optional.ofNullable(r.nextCursor()));
  }

  /**
   * A page of the runs of every workflow that {@code query} selects, newest first; null selects
   * all. The query names the runs' own fields ({@code status}, {@code workflow}, {@code runId},
   * {@code version}, {@code startedAt}, {@code completedAt}) and their search attributes, e.g.
   * {@code status = 'failed' AND customer = 'acme' AND amount >= 100}. A syntax error, an unknown
   * name or a value of the wrong type throws {@link ApiException} (400, field {@code query}) with
   * the position.
   */
  public Page search(String query, String cursor, int limit) {
    if (limit < 1 || limit > 1000) {
      throw new IllegalArgumentException("limit must be between 1 and 1000");
    }
    RunPage r = runs.search(query, cursor, limit);
    return new Page(
        r.runs().stream().map(Runs::runInfo).toList(), Optional.ofNullable(r.nextCursor()));
  }

  /** How many runs {@code query} selects ({@link #search}); null counts all. */
  public long count(String query) {
    return runs.count(query);
  }

  /**
   * Defines a search attribute runs may be given; true when it is new, false when it was defined
   * with this type already. Another type throws {@link ApiException} (409).
   */
  public boolean defineAttribute(String name, AttributeType type) {
    return Boolean.TRUE.equals(runs.defineAttribute(name, type.wire()).created());
  }

  /** The search attributes defined, by name. */
  public Map<String, AttributeType> attributeTypes() {
    Map<String, AttributeType> out = new LinkedHashMap<>();
    for (SearchAttribute a : runs.searchAttributes()) {
      out.put(a.name(), AttributeType.of(a.type()));
    }
    return out;
  }

  /** The run's search attributes, by name (a keyword list as an array). */
  public Map<String, JsonNode> attributes(String workflow, long runId) {
    Workflow.checkName(workflow);
    return fields(runs.attributes(workflow, runId).attributes());
  }

  /**
   * Sets some of a run's search attributes (a null value removes one; those not named stay) and
   * answers all it has. An attribute not defined, or a value not of its type, throws {@link
   * ApiException} (400, field {@code attributes.<name>}) and changes nothing.
   */
  public Map<String, JsonNode> setAttributes(String workflow, long runId, Map<String, ?> values) {
    Workflow.checkName(workflow);
    return fields(
        runs.setAttributes(workflow, runId, Transport.JSON.valueToTree(new LinkedHashMap<>(values)))
            .attributes());
  }

  private static Map<String, JsonNode> fields(String json) {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : tree(json).properties()) {
      out.put(e.getKey(), e.getValue());
    }
    return out;
  }

  /** Cancels a running run; false when it had already ended. */
  public boolean cancel(String workflow, long runId) {
    Workflow.checkName(workflow);
    return runs.cancel(workflow, runId).cancelled();
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

  /**
   * The run's retrying step {@code step}: the attempt that failed, its error and where its retries
   * stand. An {@link ApiException} with status 409 when the run is not retrying that step.
   */
  public RetryingStep retryingStep(String workflow, long runId, String step) {
    Workflow.checkName(workflow);
    return retrying(http("step retries").get(stepPath(workflow, runId, step) + "/retry"));
  }

  /**
   * Pauses the retries of the run's retrying step: no attempt of it starts until {@link
   * #resumeStep}. An attempt out with a worker finishes; if it fails, it is not tried again. Needs
   * scope {@code admin}; a 409 {@link ApiException} when the run is not retrying that step.
   */
  public RetryingStep pauseStep(String workflow, long runId, String step) {
    return stepAction(workflow, runId, step, "/pause");
  }

  /** Resumes the paused retries of the run's retrying step: its next attempt is due now. */
  public RetryingStep resumeStep(String workflow, long runId, String step) {
    return stepAction(workflow, runId, step, "/resume");
  }

  /**
   * Resets the attempts counted for the run's retrying step: its next attempt, due now unless
   * paused, is attempt 1, with all of its policy's attempts ahead. A 409 while an attempt of it is
   * out with a worker.
   */
  public RetryingStep resetStep(String workflow, long runId, String step) {
    return stepAction(workflow, runId, step, "/reset");
  }

  /**
   * Gives the run's retrying step {@code policy} in place of its code's, for this run: its
   * attempts, backoff, base, max and timeout apply from its next attempt (the code's jitter and
   * non-retryable types stay). Null clears what was set. Needs scope {@code admin}.
   */
  public RetryingStep setStepRetry(String workflow, long runId, String step, Retry policy) {
    Workflow.checkName(workflow);
    Map<String, Object> options = new LinkedHashMap<>();
    if (policy != null) {
      options.put("attempts", policy.attempts());
      options.put("backoff", policy.backoff().name().toLowerCase(java.util.Locale.ROOT));
      options.put("baseMs", policy.base().toMillis());
      options.put("maxMs", policy.max().toMillis());
      if (policy.timeout() != null) {
        options.put("timeoutMs", policy.timeout().toMillis());
      }
    }
    return retrying(
        http("step retries")
            .put(stepPath(workflow, runId, step) + "/options", options, JsonNode.class));
  }

  private RetryingStep stepAction(String workflow, long runId, String step, String action) {
    Workflow.checkName(workflow);
    return retrying(http("step retries").post(stepPath(workflow, runId, step) + action, null));
  }

  private static String stepPath(String workflow, long runId, String step) {
    return "/v1/workflows/" + workflow + "/runs/" + runId + "/steps/" + encode(step);
  }

  private static RetryingStep retrying(JsonNode n) {
    return new RetryingStep(
        n.path("runId").asLong(),
        n.path("step").asText(),
        n.path("attempt").asInt(),
        n.get("error"),
        instant(n, "failedAt"),
        instant(n, "nextAttemptAt"),
        n.path("state").asText(),
        n.path("paused").asBoolean(),
        instant(n, "pausedAt"),
        n.get("options"));
  }

  private static Instant instant(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || v.isNull() ? null : Instant.parse(v.asText());
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
