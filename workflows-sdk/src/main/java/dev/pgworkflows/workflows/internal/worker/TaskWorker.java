package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.protocol.CancelOnRules;
import dev.pgworkflows.protocol.ScheduleRegistration;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerMetrics;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.internal.http.HttpWorkerTransport;
import dev.pgworkflows.workflows.internal.http.ScheduleRequests;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.jdbc.JdbcWorkerTransport;
import dev.pgworkflows.workflows.internal.link.Completions;
import dev.pgworkflows.workflows.internal.link.TakeBack;
import dev.pgworkflows.workflows.internal.link.WorkerTransport;
import dev.pgworkflows.workflows.internal.replay.CompletionHook;
import dev.pgworkflows.workflows.internal.replay.RunEnvironment;
import dev.pgworkflows.workflows.internal.replay.Task;
import dev.pgworkflows.workflows.internal.replay.WorkerCounters;
import io.opentelemetry.api.GlobalOpenTelemetry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * {@code workflow.serve()}: one intake thread takes tasks, from the workflow's task stream or,
 * without {@link WorkerOptions#taskStream} or while streams are held back on the way, by long
 * polls; the {@link Runners} run them, one per {@link Slots slot}. A run's last completion may
 * bring back the next task for its slot, which its thread runs next. When the server is unreachable
 * the intake backs off and tries again; leased tasks the worker could not finish come back to some
 * worker when their lease runs out.
 */
public final class TaskWorker implements Worker {
  private final WorkerOptions options;
  private final WorkerTransport link;
  private final Slots slots;
  private final Completions completions;
  private final ScheduledExecutorService heartbeats;
  private final Runners runners;
  private final LongPoll longPoll;

  /** Null when the worker only long-polls. */
  private final TaskStream taskStream;

  private final List<CodeRegistration> registrations;
  private final Thread intake;
  private final WorkerCounters counters = new WorkerCounters();
  private volatile boolean stopping;

  private <I, O> TaskWorker(Definition<I, O> workflow, WorkerOptions options, CompletionHook hook) {
    this.options = options;
    String name = workflow.name();
    List<Integer> versions =
        options.versions() != null ? options.versions() : List.of(workflow.version());
    Map<String, String> identity = WorkerIds.headers(options.concurrency(), options.labels());
    // Over HTTP, polls and streams name the worker (the workers listing); completions, the busy
    // path, do not. Over JDBC the engine in this process sees the worker by the same names.
    this.link =
        options.dataSource() != null
            ? new JdbcWorkerTransport(
                options.dataSource(),
                name,
                WorkerIds.identity(identity, options.labels()),
                options.openTelemetry() != null
                    ? options.openTelemetry()
                    : GlobalOpenTelemetry.get())
            : new HttpWorkerTransport(
                new Transport(options.url(), options.token()),
                new Transport(options.url(), options.token(), identity));
    this.slots = new Slots(options.concurrency());
    this.completions =
        new Completions(
            link,
            name,
            new TakeBack(versions, options.lease().toSeconds(), this::takesBack, this::handOver),
            slots);
    this.heartbeats =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "wf-" + name + "-lease");
              t.setDaemon(true);
              return t;
            });
    RunEnvironment env =
        new RunEnvironment(
            heartbeats,
            options.lease(),
            () -> stopping,
            (options.openTelemetry() != null ? options.openTelemetry() : GlobalOpenTelemetry.get())
                .getTracer("dev.pgworkflows.workflows"),
            options.clock(),
            hook,
            counters,
            options.labels());
    TaskRunner<I, O> runner = new TaskRunner<>(workflow, link, completions, env);
    this.runners = new Runners(name, options.concurrency(), slots, runner, () -> stopping);
    Backoff backoff = new Backoff();
    this.longPoll =
        new LongPoll(name, versions, options, link, slots, runners, backoff, () -> stopping);
    this.taskStream =
        options.taskStream() && link instanceof HttpWorkerTransport http
            ? new TaskStream(
                name, versions, options, http.named(), slots, runners, backoff, () -> stopping)
            : null;
    this.registrations =
        List.of(
            new CodeRegistration(
                name,
                "its schedules",
                !workflow.schedules().isEmpty(),
                () ->
                    link.registerSchedules(
                        name,
                        new ScheduleRegistration(
                            workflow.schedules().stream()
                                .map(s -> ScheduleRequests.of(s, null, name))
                                .toList()))),
            new CodeRegistration(
                name,
                "its concurrency limit",
                workflow.concurrency() != null,
                () -> link.setCodeConcurrency(name, workflow.concurrency())),
            new CodeRegistration(
                name,
                "its throttle",
                workflow.throttle() != null,
                () -> link.setCodeThrottle(name, workflow.throttle())),
            new CodeRegistration(
                name,
                "its routing",
                workflow.routing() != null,
                () -> link.setCodeRouting(name, workflow.routing())),
            new CodeRegistration(
                name,
                "its cancel-on rules",
                !workflow.cancelOn().isEmpty(),
                () -> link.setCancelOn(name, new CancelOnRules(null, workflow.cancelOn()))));
    this.intake = new Thread(this::takeTasks, "wf-" + name + "-poll");
    this.intake.setDaemon(true);
  }

  /** Starts a worker for {@code workflow}. */
  public static Worker start(Definition<?, ?> workflow, WorkerOptions options) {
    return start(workflow, options, CompletionHook.NONE);
  }

  /** As {@link #start(Definition, WorkerOptions)}, with a test's hook around completions. */
  public static Worker start(
      Definition<?, ?> workflow, WorkerOptions options, CompletionHook hook) {
    TaskWorker w = new TaskWorker(workflow, options, hook);
    try {
      w.registrations.forEach(CodeRegistration::register);
    } catch (RuntimeException e) {
      w.close();
      throw e;
    }
    w.intake.start();
    return w;
  }

  /**
   * Whether a completion that frees a slot asks for the slot's next task. Only a saturated worker
   * asks: while a slot is free, its stream (or a poll) is out for it, and takes whatever is due.
   */
  private boolean takesBack() {
    return !stopping && !longPoll.inFlight() && slots.saturated();
  }

  /** A task a completion took back, run next on the completion's thread. */
  private void handOver(Task task) {
    runners.handOver(task);
  }

  /**
   * Takes tasks until the worker closes: reads task streams, one after another, or long-polls when
   * the worker does not stream or a stream was lately held back on the way.
   */
  private void takeTasks() {
    while (!stopping && !Thread.currentThread().isInterrupted()) {
      registrations.forEach(CodeRegistration::retry);
      TaskIntake from = taskStream != null && taskStream.usable() ? taskStream : longPoll;
      from.take();
    }
  }

  /** A duration in whole seconds, as the protocol's integer fields take it. */
  static int seconds(Duration d) {
    return (int) Math.min(Integer.MAX_VALUE, d.toSeconds());
  }

  @Override
  public int inFlight() {
    return slots.inFlight();
  }

  @Override
  public WorkerMetrics metrics() {
    return new WorkerMetrics(
        options.concurrency(),
        slots.inFlight(),
        counters.tasks.sum(),
        counters.stepsSucceeded.sum(),
        counters.stepsFailed.sum(),
        counters.runsCompleted.sum(),
        counters.runsFailed.sum());
  }

  @Override
  public void close() {
    if (stopping) {
      return;
    }
    stopping = true;
    if (taskStream != null) {
      taskStream.stop();
    }
    longPoll.stop();
    try {
      // The stream ends as asked, or the poll in flight returns within pollWait: neither is cut,
      // because the server may already have leased tasks to it, which would then be stranded until
      // their lease ran out. Whatever comes is handed straight back.
      intake.join(options.pollWait().plusSeconds(20).toMillis());
      if (intake.isAlive()) {
        intake.interrupt();
      }
      runners.shutdown(options.shutdownTimeout());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      heartbeats.shutdownNow();
      completions.close();
      link.close();
    }
  }
}
