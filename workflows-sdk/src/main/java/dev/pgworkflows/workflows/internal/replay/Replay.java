package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.workflows.Cancellation;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.NonDeterministicWorkflowException;
import dev.pgworkflows.workflows.Retry;
import dev.pgworkflows.workflows.StepContext;
import dev.pgworkflows.workflows.StepFailedException;
import dev.pgworkflows.workflows.TypeRef;
import dev.pgworkflows.workflows.WorkflowContext;
import dev.pgworkflows.workflows.internal.http.Transport;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

/**
 * One execution of a workflow body against its journal. Journaled steps return their stored results
 * in journal order; the first new step runs, is journaled, and — being immediate — the body simply
 * carries on under the same lease (one round trip per step). Sleeps, waits and retries hand the run
 * back to the queue and unwind the body with {@link Suspend}.
 *
 * <p>A new step's completion is sent with the run's next write: before the next step, sleep or wait
 * begins, or together with the run's result when the body returns or throws. Between the two runs
 * only the body's own code, which holds no side effects (they belong in steps), so a crash in
 * between re-runs the step exactly as a crash before an immediate write would; nothing that could
 * depend on the step's result becomes durable before it. A run's last step costs no round trip of
 * its own: its journal entry and the run's end are one transaction.
 */
public final class Replay implements WorkflowContext, StepContext {
  private static final Pattern STEP = Pattern.compile("[a-zA-Z0-9._-]{1,128}");

  /**
   * Fault injection for the reliability suite: {@code after-step:<name>} halts the JVM once step
   * {@code name} returned but before its completion is sent; {@code after-commit:<name>} right
   * after the completion committed. Unset in normal use.
   */
  private static final String CRASH_AT = System.getProperty("pgworkflows.test.crashAt");

  private static void crashPoint(String point, String step) {
    if (CRASH_AT != null && CRASH_AT.equals(point + ":" + step)) {
      Runtime.getRuntime().halt(137);
    }
  }

  private final String workflow;
  private final Task task;
  private final List<Task.Entry> journal;
  private final Lease lease;
  private final Flag cancellation = new Flag();
  private final ScheduledExecutorService heartbeats;
  private final Duration heartbeatEvery;
  private final BooleanSupplier stopping;
  private final Tracer tracer;
  private final io.opentelemetry.context.Context runContext;
  private final Set<String> seen = new HashSet<>();
  private int index;
  private int attempt;
  private boolean inStep;
  private Unsent unsent;

  /** A new step's completion not yet sent, with the span its write belongs to. */
  private record Unsent(String name, Map<String, Object> step, double seconds, Span span) {}

  public Replay(
      String workflow,
      Task task,
      Lease lease,
      ScheduledExecutorService heartbeats,
      Duration leaseDuration,
      BooleanSupplier stopping,
      Tracer tracer) {
    this.workflow = workflow;
    this.tracer = tracer;
    this.runContext = runContext(task.traceContext());
    this.task = task;
    this.journal = new ArrayList<>(task.journal() == null ? List.of() : task.journal());
    this.lease = lease;
    this.heartbeats = heartbeats;
    this.heartbeatEvery = Duration.ofMillis(Math.max(500, leaseDuration.toMillis() / 3));
    this.stopping = stopping;
    this.attempt = Math.max(1, task.attempt());
  }

  /** The run span (chosen by the server at start) as the parent of this run's step spans. */
  private static io.opentelemetry.context.Context runContext(String trace) {
    io.opentelemetry.context.Context root = io.opentelemetry.context.Context.root();
    if (trace == null) {
      return root;
    }
    String[] p = trace.split("-");
    if (p.length != 3) {
      return root;
    }
    SpanContext run =
        SpanContext.createFromRemoteParent(
            p[0], p[1], TraceFlags.getSampled(), TraceState.getDefault());
    return run.isValid() ? root.with(Span.wrap(run)) : root;
  }

  private String traced(String name, String kind, java.util.function.Supplier<String> call) {
    Span span = stepSpan(name, kind);
    Scope scope = span.makeCurrent();
    try {
      return call.get();
    } finally {
      scope.close();
      span.end();
    }
  }

  private Span stepSpan(String name, String kind) {
    return tracer
        .spanBuilder("workflow.step")
        .setParent(runContext)
        .setAttribute("workflow.name", workflow)
        .setAttribute("run_id", task.runId())
        .setAttribute("step.name", name)
        .setAttribute("step.kind", kind)
        .setAttribute("step.attempt", (long) attempt)
        .startSpan();
  }

  // ---- WorkflowContext

  @Override
  public StepContext step() {
    return this;
  }

  @Override
  public String workflow() {
    return workflow;
  }

  @Override
  public long runId() {
    return task.runId();
  }

  @Override
  public int version() {
    return task.version();
  }

  @Override
  public int attempt() {
    return attempt;
  }

  @Override
  public Cancellation cancellation() {
    return cancellation;
  }

  // ---- StepContext

  @Override
  public <T> T run(String name, Class<T> type, Fn<T> fn) {
    return run(name, type, fn, Retry.DEFAULT);
  }

  @Override
  public <T> T run(String name, Class<T> type, Fn<T> fn, Retry retry) {
    return execute(name, type, fn, retry);
  }

  @Override
  public <T> T run(String name, TypeRef<T> type, Fn<T> fn, Retry retry) {
    return execute(name, type.type(), fn, retry);
  }

  @Override
  public void run(String name, Action action) {
    run(name, action, Retry.DEFAULT);
  }

  @Override
  public void run(String name, Action action, Retry retry) {
    execute(
        name,
        Void.class,
        () -> {
          action.run();
          return null;
        },
        retry);
  }

  @Override
  public void sleep(String name, Duration duration) {
    if (duration == null || duration.isNegative()) {
      throw new IllegalArgumentException("sleep duration must be zero or positive");
    }
    if (replayed(name, "sleep") != null) {
      return;
    }
    // Timed from the call: the previous step's completion, sent first, does not lengthen it.
    Instant now = Instant.now();
    beforeNewStep();
    Map<String, Object> step = step(name, "sleep", now);
    step.put("output", Map.of("until", now.plus(duration).toString()));
    String outcome =
        traced(
            name,
            "sleep",
            () ->
                lease.suspend(
                    step,
                    Map.of(
                        "reason",
                        "resume",
                        "delayMs",
                        duration.toMillis(),
                        "until",
                        now.plus(duration).toString())));
    throw new Suspend("ok".equals(outcome) ? Suspend.Why.SLEEPING : Suspend.Why.LEASE_LOST);
  }

  @Override
  public <T> Optional<T> waitForEvent(String name, Class<T> type, Match match, Duration timeout) {
    return awaitEvent(name, type, match, timeout);
  }

  @Override
  public <T> Optional<T> waitForEvent(String name, TypeRef<T> type, Match match, Duration timeout) {
    return awaitEvent(name, type.type(), match, timeout);
  }

  private <T> Optional<T> awaitEvent(String name, Type type, Match match, Duration timeout) {
    if (timeout == null || timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must be zero or positive");
    }
    Task.Entry e = replayed(name, "wait");
    if (e != null) {
      return e.timedOut() ? Optional.empty() : Optional.ofNullable(convert(e.output(), type));
    }
    Instant now = Instant.now();
    beforeNewStep();
    Map<String, Object> wait = new LinkedHashMap<>();
    wait.put("step", name);
    wait.put("event", name);
    wait.put("match", (match == null ? Match.any() : match).document());
    String outcome =
        traced(
            name,
            "wait",
            () ->
                lease.suspend(
                    null,
                    Map.of(
                        "delayMs",
                        timeout.toMillis(),
                        "until",
                        now.plus(timeout).toString(),
                        "wait",
                        wait)));
    throw new Suspend("ok".equals(outcome) ? Suspend.Why.WAITING : Suspend.Why.LEASE_LOST);
  }

  private <T> T execute(String name, Type type, Fn<T> fn, Retry retry) {
    if (inStep) {
      throw new IllegalStateException(
          "step " + name + " was called inside another step; steps cannot nest");
    }
    Task.Entry e = replayed(name, "run");
    if (e != null) {
      if (e.error() != null && !e.error().isNull()) {
        throw failed(name, e.error());
      }
      return convert(e.output(), type);
    }
    beforeNewStep();
    Span span = stepSpan(name, "run");
    Scope scope = span.makeCurrent();
    try {
      return runNew(name, type, fn, retry, span);
    } finally {
      scope.close();
      span.end();
    }
  }

  private <T> T runNew(String name, Type type, Fn<T> fn, Retry retry, Span span) {
    Instant started = Instant.now();
    long t0 = System.nanoTime();
    Object value = null;
    Throwable failure = null;
    ScheduledFuture<?> heartbeat = startHeartbeat();
    inStep = true;
    try {
      value = fn.call();
    } catch (Suspend s) {
      throw s;
    } catch (Throwable t) {
      failure = t;
    } finally {
      inStep = false;
      heartbeat.cancel(false);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    if (failure != null) {
      span.recordException(failure);
      span.setStatus(StatusCode.ERROR);
      if (cancellation.isCancelled()) {
        throw new Suspend(Suspend.Why.LEASE_LOST);
      }
      if (retry.retries(attempt, failure)) {
        String outcome = lease.retryLater(retry.delayAfter(attempt), name);
        throw new Suspend("ok".equals(outcome) ? Suspend.Why.RETRYING : Suspend.Why.LEASE_LOST);
      }
      ObjectNode error = errorJson(failure, name);
      Map<String, Object> step = step(name, "run", started);
      step.put("error", error);
      unsent = new Unsent(name, step, seconds, span);
      journal.add(new Task.Entry(name, "run", null, error, false));
      index++;
      attempt = 1;
      throw failed(name, error);
    }
    JsonNode output = Transport.JSON.valueToTree(value);
    Map<String, Object> step = step(name, "run", started);
    step.put("output", output);
    crashPoint("after-step", name);
    unsent = new Unsent(name, step, seconds, span);
    journal.add(new Task.Entry(name, "run", output, null, false));
    index++;
    attempt = 1;
    // Hand back what a replay would: the journaled JSON, not the live object.
    return convert(output, type);
  }

  /** Ends the run with the body's result (and the last step's completion, if unsent). */
  public String finish(Object output) {
    Map<String, Object> result = new LinkedHashMap<>();
    result.put("status", "completed");
    try {
      result.put("output", Transport.JSON.valueToTree(output));
    } catch (RuntimeException e) {
      // The run cannot end; its last step is journaled all the same.
      flush();
      throw e;
    }
    return end(result);
  }

  /** Ends the run as failed with {@code error} (and the last step's completion, if unsent). */
  public String fail(Throwable error) {
    ObjectNode json =
        error instanceof StepFailedException sf ? stepError(sf) : errorJson(error, null);
    return end(Map.of("status", "failed", "error", json));
  }

  private String end(Map<String, Object> result) {
    Unsent u = unsent;
    if (u == null) {
      return lease.finish(result, null, null);
    }
    unsent = null;
    String outcome;
    // The write joins the step's trace, as it would have when sent at the step's end.
    Scope scope = u.span().makeCurrent();
    try {
      outcome = lease.finish(result, u.step(), u.seconds());
    } finally {
      scope.close();
    }
    crashPoint("after-commit", u.name());
    return outcome;
  }

  /** Sends the last new step's completion, if it is still unsent; the lease carries on. */
  private void flush() {
    Unsent u = unsent;
    if (u == null) {
      return;
    }
    unsent = null;
    String outcome;
    // The write joins the step's trace, as it would have when sent at the step's end.
    Scope scope = u.span().makeCurrent();
    try {
      outcome = lease.completeInline(u.step(), u.seconds());
    } finally {
      scope.close();
    }
    crashPoint("after-commit", u.name());
    if (!"ok".equals(outcome)) {
      throw new Suspend(Suspend.Why.LEASE_LOST);
    }
  }

  /** Hands the task back untouched, to be picked up again after {@code delay}. */
  public String release(Duration delay) {
    return lease.retryLater(delay, null);
  }

  private ObjectNode stepError(StepFailedException sf) {
    for (Task.Entry e : journal) {
      if (e.name().equals(sf.step()) && e.error() instanceof ObjectNode o) {
        return o;
      }
    }
    return errorJson(sf, sf.step());
  }

  /**
   * The journal entry for {@code name} when replaying, null when the step is new. Enforces that
   * names are unique and are reached in journal order.
   */
  private Task.Entry replayed(String name, String kind) {
    if (name == null || !STEP.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "step name \""
              + name
              + "\" must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\", \"-\"");
    }
    if (!seen.add(name)) {
      throw new NonDeterministicWorkflowException(
          "step name \"" + name + "\" is used twice in run " + task.runId());
    }
    if (index < journal.size()) {
      Task.Entry e = journal.get(index);
      if (!e.name().equals(name)) {
        throw new NonDeterministicWorkflowException(
            "replay of run "
                + task.runId()
                + " reached step \""
                + name
                + "\" where the journal has step \""
                + e.name()
                + "\" (step "
                + (index + 1)
                + ")");
      }
      if (!e.kind().equals(kind)) {
        throw new NonDeterministicWorkflowException(
            "step \""
                + name
                + "\" is a "
                + kind
                + " in the code but a "
                + e.kind()
                + " in the journal");
      }
      index++;
      return e;
    }
    return null;
  }

  private void beforeNewStep() {
    flush();
    if (cancellation.isCancelled()) {
      throw new Suspend(Suspend.Why.LEASE_LOST);
    }
    if (stopping.getAsBoolean()) {
      lease.retryLater(Duration.ZERO, null);
      throw new Suspend(Suspend.Why.RELEASED);
    }
  }

  private ScheduledFuture<?> startHeartbeat() {
    long every = heartbeatEvery.toMillis();
    return heartbeats.scheduleWithFixedDelay(
        () -> {
          try {
            if (!lease.extend()) {
              cancellation.set();
            }
          } catch (RuntimeException ignored) {
            // the next beat tries again
          }
        },
        every,
        every,
        TimeUnit.MILLISECONDS);
  }

  private static Map<String, Object> step(String name, String kind, Instant started) {
    Map<String, Object> step = new LinkedHashMap<>();
    step.put("name", name);
    step.put("kind", kind);
    step.put("startedAt", started.toString());
    return step;
  }

  private static StepFailedException failed(String name, JsonNode error) {
    return new StepFailedException(
        name, error.path("type").asText("unknown"), error.path("message").asText(""));
  }

  static ObjectNode errorJson(Throwable t, String step) {
    ObjectNode e = Transport.JSON.createObjectNode();
    e.put("type", t.getClass().getName());
    e.put("message", String.valueOf(t.getMessage()));
    if (step != null) {
      e.put("step", step);
    }
    StringWriter sw = new StringWriter();
    t.printStackTrace(new PrintWriter(sw));
    String stack = sw.toString();
    e.put("stack", stack.length() > 8000 ? stack.substring(0, 8000) : stack);
    return e;
  }

  @SuppressWarnings("unchecked")
  static <T> T convert(JsonNode node, Type type) {
    if (type == Void.class || type == void.class) {
      return null;
    }
    if (node == null || node.isNull()) {
      return null;
    }
    JavaType jt = Transport.JSON.getTypeFactory().constructType(type);
    try {
      return (T) Transport.JSON.treeToValue(node, jt);
    } catch (java.io.IOException | IllegalArgumentException e) {
      throw new IllegalStateException(
          "journaled value does not fit " + jt + ": " + e.getMessage(), e);
    }
  }

  /** The cancellation flag the heartbeat sets. */
  static final class Flag implements Cancellation {
    private final java.util.concurrent.CountDownLatch latch =
        new java.util.concurrent.CountDownLatch(1);

    void set() {
      latch.countDown();
    }

    @Override
    public boolean isCancelled() {
      return latch.getCount() == 0;
    }

    @Override
    public boolean await(Duration timeout) throws InterruptedException {
      return latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }
  }
}
