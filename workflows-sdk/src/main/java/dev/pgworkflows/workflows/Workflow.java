package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.workflows.internal.replay.UpdateHandlers;
import dev.pgworkflows.workflows.internal.worker.Definition;
import dev.pgworkflows.workflows.internal.worker.TaskWorker;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A workflow definition: a name, a version, input and output types, and its body.
 *
 * <pre>{@code
 * Workflow<Signup, String> onboard = Workflow.define("onboard-user", Signup.class, String.class)
 *     .version(1)
 *     .retention(Duration.ofDays(30))
 *     .run((ctx, in) -> ...);
 * Worker worker = onboard.serve(WorkerOptions.url("http://localhost:7700"));
 * }</pre>
 */
public final class Workflow<I, O> {
  private final String name;
  private final int version;
  private final Duration retention;
  private final Duration deadline;
  private final Type inputType;
  private final Type outputType;
  private final WorkflowBody<I, O> body;
  private final List<Schedule> schedules;
  private final Concurrency concurrency;
  private final Throttle throttle;
  private final Routing routing;
  private final List<CancelOn> cancelOn;
  private final UpdateHandlers updates;

  private Workflow(Builder<I, O> b, WorkflowBody<I, O> body) {
    this.updates = b.updates.copy();
    this.schedules = List.copyOf(b.schedules);
    this.concurrency = b.concurrency;
    this.throttle = b.throttle;
    this.routing = b.routing;
    this.cancelOn = List.copyOf(b.cancelOn);
    this.name = b.name;
    this.version = b.version;
    this.retention = b.retention;
    this.deadline = b.deadline;
    this.inputType = b.inputType;
    this.outputType = b.outputType;
    this.body = body;
  }

  public static <I, O> Builder<I, O> define(String name, Class<I> input, Class<O> output) {
    return new Builder<>(name, input, output);
  }

  public static <I, O> Builder<I, O> define(String name, TypeRef<I> input, TypeRef<O> output) {
    return new Builder<>(name, input.type(), output.type());
  }

  /** Checks a workflow name the way the server does, before any I/O. */
  public static String checkName(String name) {
    if (!Names.isWorkflowName(name)) {
      throw new IllegalArgumentException(
          "workflow name \""
              + name
              + "\" must be 1 to 43 characters of a-z, 0-9, \"_\" and \"-\", not starting with \"-\"");
    }
    return name;
  }

  /** Builds a definition. */
  public static final class Builder<I, O> {
    private final String name;
    private final Type inputType;
    private final Type outputType;
    private int version = 1;
    private Duration retention = Duration.ofDays(30);
    private Duration deadline;
    private final List<Schedule> schedules = new ArrayList<>();
    private Concurrency concurrency;
    private Throttle throttle;
    private Routing routing;
    private final List<CancelOn> cancelOn = new ArrayList<>();
    private final UpdateHandlers updates = new UpdateHandlers();

    private Builder(String name, Type inputType, Type outputType) {
      this.name = checkName(name);
      if (inputType == null || outputType == null) {
        throw new IllegalArgumentException("input and output types are required");
      }
      this.inputType = inputType;
      this.outputType = outputType;
    }

    public Builder<I, O> version(int v) {
      if (v < 1) {
        throw new IllegalArgumentException("version must be >= 1, got " + v);
      }
      this.version = v;
      return this;
    }

    /** How long finished runs are kept (whole days, at least one). Default 30 days. */
    public Builder<I, O> retention(Duration d) {
      if (d == null || d.toDays() < 1) {
        throw new IllegalArgumentException("retention must be at least one day");
      }
      this.retention = d;
      return this;
    }

    /**
     * Gives each run a deadline {@code d} after it is due (at most a year): a run still running
     * then is ended by the server as {@link RunStatus#TIMED_OUT}, without a worker. A start's
     * {@link StartOptions.Builder#deadline} overrides it. Applies to starts made with this
     * definition ({@link WorkflowClient#start(Workflow, Object)}).
     */
    public Builder<I, O> deadline(Duration d) {
      if (d == null || d.toMillis() < 1 || d.compareTo(Duration.ofDays(365)) > 0) {
        throw new IllegalArgumentException("deadline must be between a millisecond and a year");
      }
      this.deadline = d;
      return this;
    }

    /**
     * Starts runs of this workflow on {@code schedule}'s ticks. A worker registers its definition's
     * schedules with the server when it starts (source {@code code}; its token's scope {@code
     * worker} suffices): each is made when absent and changed when it differs, so a deploy with a
     * changed schedule applies it. A schedule dropped from the code stays on the server until
     * deleted ({@link Schedules#delete}). Names must differ within a definition.
     */
    public Builder<I, O> schedule(Schedule schedule) {
      if (schedule == null) {
        throw new IllegalArgumentException("schedule must not be null");
      }
      String n = schedule.name().orElse(name);
      if (schedules.stream().anyMatch(s -> s.name().orElse(name).equals(n))) {
        throw new IllegalArgumentException(
            "workflow " + name + " has two schedules named " + n + ": give one a name()");
      }
      schedules.add(schedule);
      return this;
    }

    /**
     * At most {@code n} runs of each concurrency key of this workflow ({@link
     * StartOptions.Builder#concurrencyKey}) run at once (1 to 100000); the rest wait, oldest start
     * first, and start as slots free. The same as {@code concurrency(Concurrency.limit(n))}.
     */
    public Builder<I, O> concurrency(int n) {
      return concurrency(Concurrency.limit(n));
    }

    /**
     * The concurrency limit per key of this workflow: how many runs of each concurrency key ({@link
     * StartOptions.Builder#concurrencyKey}) run at once, what a start of a full key does ({@link
     * ConcurrencyStrategy}), and whether the limit comes from each run's input. A worker sets it on
     * the server when it starts ({@code PUT /v1/workflows/{name}/code-concurrency}, with the
     * worker's own token), so a deploy with a changed limit applies it and the last worker to start
     * wins. A key's own limit ({@link Workflows#setKeyConcurrencyLimit}) still holds for that key.
     * A limit dropped from the code stays on the server until removed ({@link
     * Workflows#setConcurrencyLimit} with null).
     */
    public Builder<I, O> concurrency(Concurrency c) {
      if (c == null) {
        throw new IllegalArgumentException("concurrency must not be null");
      }
      this.concurrency = c;
      return this;
    }

    /**
     * Throttles the starts of this workflow (see {@link Throttle}): starts beyond the rate are
     * queued for their turn, not refused. A worker sets it on the server when it starts ({@code PUT
     * /v1/workflows/{name}/code-throttle}, with the worker's own token), so the last deploy's
     * holds; one dropped from the code stays until removed ({@link Workflows#removeThrottle}).
     */
    public Builder<I, O> throttle(Throttle t) {
      if (t == null) {
        throw new IllegalArgumentException("throttle must not be null");
      }
      this.throttle = t;
      return this;
    }

    /**
     * Says which workers take this workflow's runs (see {@link Routing}): workers with labels it
     * requires, those it prefers first, and sticky runs. A worker sets it on the server when it
     * starts ({@code PUT /v1/workflows/{name}/code-routing}, with the worker's own token), so the
     * last deploy's holds; an operator changes it with {@link Workflows#setRouting}.
     */
    public Builder<I, O> routing(Routing r) {
      if (r == null) {
        throw new IllegalArgumentException("routing must not be null");
      }
      this.routing = r;
      return this;
    }

    /**
     * Cancels runs of this workflow when {@code event} comes (a signal to a run, or a message on a
     * topic; see {@link CancelOn}); at most 20 such rules. A worker sets its definition's rules on
     * the server when it starts ({@code PUT /v1/workflows/{name}/cancel-on}, with the worker's own
     * token), replacing the workflow's rules, so the last deploy's hold; a deploy whose code has
     * none leaves the rules as they were ({@code PUT} {@code {"rules": []}} removes them).
     */
    public Builder<I, O> cancelOn(CancelOn event) {
      if (event == null) {
        throw new IllegalArgumentException("cancelOn must not be null");
      }
      if (cancelOn.size() == 20) {
        throw new IllegalArgumentException("a workflow has at most 20 cancel-on rules");
      }
      cancelOn.add(event);
      return this;
    }

    /**
     * Answers updates named {@code name} sent to this workflow's runs ({@link
     * WorkflowClient#update}) with {@code handler}, whose return value is the caller's answer. The
     * handler runs while the run's body does not (when it sleeps or waits, or between two of its
     * tasks), reads and changes the run's state, and may signal the run to end its wait; its answer
     * and its state changes are journaled in the run at once (see {@link UpdateContext}). Names are
     * step names, unique within a definition; at most 50.
     */
    public <U> Builder<I, O> onUpdate(String name, Class<U> input, UpdateHandler<U, ?> handler) {
      updates.add(name, input, null, handler);
      return this;
    }

    /**
     * As {@link #onUpdate(String, Class, UpdateHandler)}, with {@code validator} first: an update
     * it throws for is refused, with its message, and journals nothing.
     */
    public <U> Builder<I, O> onUpdate(
        String name, Class<U> input, UpdateValidator<U> validator, UpdateHandler<U, ?> handler) {
      if (validator == null) {
        throw new IllegalArgumentException("update " + name + "'s validator must not be null");
      }
      updates.add(name, input, validator, handler);
      return this;
    }

    /** As {@link #onUpdate(String, Class, UpdateValidator, UpdateHandler)}, for a generic input. */
    public <U> Builder<I, O> onUpdate(
        String name, TypeRef<U> input, UpdateValidator<U> validator, UpdateHandler<U, ?> handler) {
      updates.add(name, input == null ? null : input.type(), validator, handler);
      return this;
    }

    public Workflow<I, O> run(WorkflowBody<I, O> body) {
      if (body == null) {
        throw new IllegalArgumentException("body must not be null");
      }
      return new Workflow<>(this, body);
    }
  }

  public String name() {
    return name;
  }

  public int version() {
    return version;
  }

  public Duration retention() {
    return retention;
  }

  /** The deadline of each run after it is due, null when runs have none. */
  public Duration deadline() {
    return deadline;
  }

  public Type inputType() {
    return inputType;
  }

  public Type outputType() {
    return outputType;
  }

  public WorkflowBody<I, O> body() {
    return body;
  }

  /** The schedules its workers register (see {@link Builder#schedule}). */
  public List<Schedule> schedules() {
    return schedules;
  }

  /** The concurrency limit per key its workers set (see {@link Builder#concurrency}), or null. */
  public Concurrency concurrency() {
    return concurrency;
  }

  /** Which workers take its runs, as its workers set it (see {@link Builder#routing}), or null. */
  public Routing routing() {
    return routing;
  }

  /** The throttle its workers set (see {@link Builder#throttle}), or null. */
  public Throttle throttle() {
    return throttle;
  }

  /** The events that cancel its runs (see {@link Builder#cancelOn}). */
  public List<CancelOn> cancelOn() {
    return cancelOn;
  }

  /** The names of the updates it answers (see {@link Builder#onUpdate}), in the order declared. */
  public List<String> updates() {
    return List.copyOf(updates.all().keySet());
  }

  /**
   * Starts a worker that takes this workflow's runs (from a task stream or by long polls) until
   * closed.
   */
  public Worker serve(WorkerOptions options) {
    return TaskWorker.start(
        new Definition<>(
            name,
            version,
            inputType,
            body,
            schedules,
            concurrency == null ? null : concurrency.wire(),
            throttle == null ? null : throttle.wire(),
            routing == null ? null : routing.wire(),
            cancelOn.stream().map(CancelOn::rule).toList(),
            updates),
        options);
  }
}
