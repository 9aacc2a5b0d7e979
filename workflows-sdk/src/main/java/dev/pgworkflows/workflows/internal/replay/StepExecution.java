package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.protocol.CallbackMinted;
import dev.pgworkflows.protocol.Next;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.protocol.Wait;
import dev.pgworkflows.workflows.Callback;
import dev.pgworkflows.workflows.CallbackRejectedException;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.RateLimited;
import dev.pgworkflows.workflows.Retry;
import dev.pgworkflows.workflows.StepContext;
import dev.pgworkflows.workflows.TypeRef;
import dev.pgworkflows.workflows.internal.http.Transport;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Executes the body's step calls. A call the {@link Journal} holds returns its journaled result. A
 * new run step runs its code under a heartbeat and, being immediate, lets the body carry on under
 * the same lease, its completion held by {@link RunCompletion} for the run's next write. Sleeps,
 * waits and retries hand the run back to the queue and unwind the body with {@link Suspend}.
 */
final class StepExecution {
  private final Journal journal;
  private final RunCompletion completion;
  private final Lease lease;
  private final StepTracing tracing;
  private final Heartbeat heartbeat;
  private final CancellationFlag cancellation;
  private final BooleanSupplier stopping;
  private final InstantSource clock;
  private final CompletionHook hook;
  private final RunStateMap state;
  private final WorkerCounters counters;

  /** The worker's labels. */
  private final Map<String, String> labels;

  /** The labels new steps need of their worker now (null: none); see {@link #needing}. */
  private Map<String, String> needs;

  private boolean needsSoft;
  private int attempt;

  /** The retry options an operator set for the run's retrying step (null: none). */
  private final JsonNode operatorOptions;

  private volatile boolean inStep;

  StepExecution(
      Journal journal,
      RunCompletion completion,
      Lease lease,
      StepTracing tracing,
      CancellationFlag cancellation,
      int attempt,
      JsonNode operatorOptions,
      RunEnvironment env,
      RunStateMap state) {
    this.journal = journal;
    this.completion = completion;
    this.lease = lease;
    this.tracing = tracing;
    this.cancellation = cancellation;
    this.attempt = Math.max(1, attempt);
    this.operatorOptions = operatorOptions;
    this.heartbeat = new Heartbeat(env.heartbeats(), env.leaseDuration());
    this.stopping = env.stopping();
    this.clock = env.clock();
    this.hook = env.hook();
    this.state = state;
    this.counters = env.counters();
    this.labels = env.labels();
  }

  /** The run's state, whose changes go with the rows this journals. */
  RunStateMap state() {
    return state;
  }

  /** The attempt of the step about to run or running, from 1. */
  int attempt() {
    return attempt;
  }

  <T> T run(String name, Type type, StepContext.Fn<T> fn, Retry retry) {
    checkOutsideStep(name);
    Task.Entry e = journal.replayed(name, "run");
    if (e != null) {
      if (Journal.isFailure(e.error())) {
        throw StepErrors.failed(name, e.error());
      }
      return StepValues.convert(e.output(), type);
    }
    beforeNewStep();
    Span span = tracing.start(name, "run", attempt);
    Scope scope = span.makeCurrent();
    try {
      return runNew(name, type, fn, OperatorRetry.apply(operatorOptions, name, retry), span);
    } finally {
      scope.close();
      span.end();
    }
  }

  /** Throws when called from inside a running step: steps cannot nest. */
  void checkOutsideStep(String name) {
    if (inStep) {
      throw new IllegalStateException(
          "step " + name + " was called inside another step; steps cannot nest");
    }
  }

  /** Throws when {@code what}, which only the body may call, is called from inside a step. */
  void checkOutsideStepFor(String what) {
    if (inStep) {
      throw new IllegalStateException(
          what + " was called inside a step; call it from the workflow body");
    }
  }

  /** A step other than a run step was journaled: the next step starts at its first attempt. */
  void journaled() {
    attempt = 1;
  }

  void sleep(String name, Duration duration) {
    checkOutsideStep(name);
    if (duration == null || duration.isNegative()) {
      throw new IllegalArgumentException("sleep duration must be zero or positive");
    }
    if (journal.replayed(name, "sleep") != null) {
      return;
    }
    // Timed from the call on the monotonic clock: the previous step's completion, sent first, does
    // not lengthen it, and the wall clock (which may be off the server's) does not place its end.
    long called = System.nanoTime();
    Instant now = clock.instant();
    beforeNewStep();
    // Journaled for reading only: where the worker's clock puts the end.
    Instant until = now.plus(duration);
    StepRecord step =
        state.attach(
            new StepRecord(
                name,
                "sleep",
                Transport.JSON.createObjectNode().put("until", until.toString()),
                null,
                now),
            null);
    Next next = new Next("resume", duration.toMillis(), null, null, null);
    String outcome =
        tracing.traced(name, "sleep", attempt, () -> lease.suspend(step, next, called));
    throw new Suspend("ok".equals(outcome) ? Suspend.Why.SLEEPING : Suspend.Why.LEASE_LOST);
  }

  <T> Optional<T> waitForEvent(String name, Type type, Match match, Duration timeout) {
    return waitFor(name, name, type, match, timeout);
  }

  /** Waits, as step {@code name}, for event {@code event} (an engine's own event too). */
  private <T> Optional<T> waitFor(
      String name, String event, Type type, Match match, Duration timeout) {
    checkOutsideStep(name);
    if (timeout == null || timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must be zero or positive");
    }
    Task.Entry e = journal.replayed(name, "wait");
    if (e != null) {
      return e.timedOut()
          ? Optional.empty()
          : Optional.ofNullable(StepValues.convert(e.output(), type));
    }
    long called = System.nanoTime();
    Instant now = clock.instant();
    beforeNewStep();
    Wait wait =
        new Wait(
            name,
            event,
            Transport.JSON.valueToTree((match == null ? Match.any() : match).document()));
    Next next = new Next(null, timeout.toMillis(), null, wait, null);
    StepRecord carrier = state.carrier(now);
    String outcome =
        tracing.traced(name, "wait", attempt, () -> lease.suspend(carrier, next, called));
    throw new Suspend("ok".equals(outcome) ? Suspend.Why.WAITING : Suspend.Why.LEASE_LOST);
  }

  /**
   * Mints callback {@code name} as a run step whose output is the minted callback, so a replay gets
   * the same token and URL; its wait is step {@code <name>.result} for the event {@code
   * __callback.<name>}, which the callback's POST delivers as {@code {"ok", "body"}}.
   */
  Callback callback(String name, Duration timeout) {
    if (name == null || name.length() > 117) {
      throw new IllegalArgumentException(
          "a callback's name has at most 117 characters (its wait waits for __callback.<name>)");
    }
    if (timeout == null
        || timeout.compareTo(Duration.ofSeconds(1)) < 0
        || timeout.compareTo(Duration.ofDays(365)) > 0) {
      throw new IllegalArgumentException(
          "a callback's timeout is 1 second to a year, got " + timeout);
    }
    CallbackMinted minted =
        run(
            name,
            CallbackMinted.class,
            () -> {
              CallbackMinted m = lease.createCallback(name, timeout);
              if (m == null) {
                throw new Suspend(Suspend.Why.LEASE_LOST);
              }
              return new CallbackMinted(m.token(), m.url(), m.expiresAt(), false);
            },
            Retry.none());
    return new MintedCallback(name, minted, timeout);
  }

  /** A minted callback; its await is the body's wait for the POST. */
  private final class MintedCallback implements Callback {
    private final String name;
    private final CallbackMinted minted;
    private final Duration timeout;

    MintedCallback(String name, CallbackMinted minted, Duration timeout) {
      this.name = name;
      this.minted = minted;
      this.timeout = timeout;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Optional<String> url() {
      return Optional.ofNullable(minted.url());
    }

    @Override
    public String token() {
      return minted.token();
    }

    @Override
    public Instant expiresAt() {
      return Instant.parse(minted.expiresAt());
    }

    @Override
    public <T> Optional<T> await(Class<T> type) {
      return await((Type) type);
    }

    @Override
    public <T> Optional<T> await(TypeRef<T> type) {
      return await(type.type());
    }

    private <T> Optional<T> await(Type type) {
      Optional<JsonNode> posted =
          waitFor(name + ".result", "__callback." + name, JsonNode.class, Match.any(), timeout);
      if (posted.isEmpty()) {
        return Optional.empty();
      }
      JsonNode body = posted.get().get("body");
      if (!posted.get().path("ok").asBoolean(false)) {
        throw new CallbackRejectedException(name, body);
      }
      return Optional.ofNullable(StepValues.convert(body, type));
    }
  }

  private <T> T runNew(String name, Type type, StepContext.Fn<T> fn, Retry retry, Span span) {
    Instant started = clock.instant();
    long t0 = System.nanoTime();
    Object value = null;
    Throwable failure = null;
    ScheduledFuture<?> beat = heartbeat.start(lease, cancellation);
    state.stepStarted();
    inStep = true;
    try {
      value = StepTimeout.call(name, fn, retry.timeout());
    } catch (Suspend s) {
      state.stepFailed();
      throw s;
    } catch (Throwable t) {
      failure = t;
    } finally {
      inStep = false;
      beat.cancel(false);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    if (failure != null) {
      counters.stepsFailed.increment();
      // A failed attempt's state changes are dropped with it: only a journaled success shows any.
      state.stepFailed();
      span.recordException(failure);
      span.setStatus(StatusCode.ERROR);
      if (cancellation.isCancelled()) {
        throw new Suspend(Suspend.Why.LEASE_LOST);
      }
      RateLimited limited = rateLimited(failure);
      if (limited != null) {
        String outcome = lease.rateLimited(limited.retryAfter());
        throw new Suspend("ok".equals(outcome) ? Suspend.Why.RETRYING : Suspend.Why.LEASE_LOST);
      }
      if (retry.retries(attempt, failure)) {
        String outcome =
            lease.retryLater(retry.delayAfter(attempt), name, StepErrors.json(failure, name));
        throw new Suspend("ok".equals(outcome) ? Suspend.Why.RETRYING : Suspend.Why.LEASE_LOST);
      }
      ObjectNode error = StepErrors.json(failure, name);
      completion.hold(
          name,
          state.attach(new StepRecord(name, "run", null, error, started), null),
          seconds,
          span);
      journal.append(new Task.Entry(name, "run", null, error, false));
      attempt = 1;
      throw StepErrors.failed(name, error);
    }
    JsonNode output;
    try {
      output = Transport.JSON.valueToTree(value);
    } catch (RuntimeException e) {
      // A value that cannot be journaled is a failed attempt, as in BranchAttempts.
      counters.stepsFailed.increment();
      state.stepFailed();
      throw e;
    }
    counters.stepsSucceeded.increment();
    // Its changes join the view as the step's row is held to be journaled.
    ObjectNode changes = state.stepSucceeded();
    hook.stepReturned(name);
    completion.hold(
        name,
        state.attach(new StepRecord(name, "run", output, null, started), changes),
        seconds,
        span);
    journal.append(new Task.Entry(name, "run", output, null, false, changes));
    attempt = 1;
    // Hand back what a replay would: the journaled JSON, not the live object.
    return StepValues.convert(output, type);
  }

  /** The {@link RateLimited} a step's failure is or was caused by, null when none. */
  static RateLimited rateLimited(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof RateLimited r) {
        return r;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
  }

  /**
   * Runs new steps other than a lone run step (a parallel group's branches) as a step: the previous
   * step's completion goes first and a cancelled or stopping run stops here ({@link
   * #beforeNewStep}), steps called meanwhile (from any thread) throw, and the step after them
   * starts at its first attempt.
   */
  <T> T newSteps(Supplier<T> run) {
    beforeNewStep();
    StepRecord carrier = state.carrier(clock.instant());
    if (carrier != null) {
      // The body's state changes before the group go first, in a row of their own.
      completion.hold(carrier.name(), carrier, null, Span.getInvalid());
      beforeNewStep();
    }
    inStep = true;
    state.groupRunning(true);
    try {
      return run.get();
    } finally {
      state.groupRunning(false);
      inStep = false;
      attempt = 1;
    }
  }

  /**
   * Before a stream write of the body: sends the previous step's completion first, so the body's
   * entry is newer than that step's journal row (a restart from a step tells the body's entries
   * before it from those after it by that row's time).
   */
  void beforeBodyWrite() {
    Integer next = completion.flush();
    if (next != null) {
      attempt = next;
    }
  }

  /**
   * Before a new step: sends the previous step's completion, and stops when the run was cancelled
   * or the worker is closing (the run is handed back, to continue elsewhere at this step).
   */
  void beforeNewStep() {
    Integer next = completion.flush();
    if (next != null) {
      // The server's count for the step about to start (1: each step counts its own attempts).
      attempt = next;
    }
    if (cancellation.isCancelled()) {
      throw new Suspend(Suspend.Why.LEASE_LOST);
    }
    if (stopping.getAsBoolean()) {
      lease.retryLater(Duration.ZERO, null);
      throw new Suspend(Suspend.Why.RELEASED);
    }
    if (needs != null && !labels.entrySet().containsAll(needs.entrySet())) {
      String outcome = lease.route(needs, needsSoft);
      if ("routed".equals(outcome)) {
        throw new Suspend(Suspend.Why.ROUTED);
      }
      if (!"run_here".equals(outcome)) {
        throw new Suspend(Suspend.Why.LEASE_LOST);
      }
    }
  }

  /**
   * Calls {@code call}, whose new steps need a worker whose labels hold {@code selector} (only
   * preferably, with {@code soft}): on a worker without them, the task goes to workers that have
   * them before such a step starts.
   */
  <T> T needing(Map<String, String> selector, boolean soft, Supplier<T> call) {
    Map<String, String> before = needs;
    boolean beforeSoft = needsSoft;
    needs = selector;
    needsSoft = soft;
    try {
      return call.get();
    } finally {
      needs = before;
      needsSoft = beforeSoft;
    }
  }
}
