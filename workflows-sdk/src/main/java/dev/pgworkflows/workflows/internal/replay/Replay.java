package dev.pgworkflows.workflows.internal.replay;

import dev.pgworkflows.protocol.Labels;
import dev.pgworkflows.workflows.Arm;
import dev.pgworkflows.workflows.Attributes;
import dev.pgworkflows.workflows.Branch;
import dev.pgworkflows.workflows.Callback;
import dev.pgworkflows.workflows.Cancellation;
import dev.pgworkflows.workflows.ChildOptions;
import dev.pgworkflows.workflows.ChildRun;
import dev.pgworkflows.workflows.Fired;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.Retry;
import dev.pgworkflows.workflows.RunState;
import dev.pgworkflows.workflows.RunStream;
import dev.pgworkflows.workflows.StepContext;
import dev.pgworkflows.workflows.TypeRef;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowContext;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;

/**
 * One execution of a workflow body against its journal: the context the body sees. Replay runs from
 * the top on every resume; journaled steps return their stored results in journal order ({@link
 * Journal}), the first new step runs ({@link StepExecution}), and the run ends, fails or is handed
 * back through {@link RunCompletion}, which also sends a new step's completion with the run's next
 * write.
 */
public final class Replay implements WorkflowContext, StepContext {
  private final String workflow;
  private final Task task;
  private final CancellationFlag cancellation = new CancellationFlag();
  private final RunCompletion completion;
  private final StepExecution steps;
  private final ParallelSteps parallel;
  private final Composition composition;
  private final JournaledValues values;
  private final Attributes attributes;
  private final RunStreams streams;
  private final RunStateMap state;

  public Replay(String workflow, Task task, Lease lease, RunEnvironment env) {
    this(workflow, task, new Journal(task.runId(), task.journal()), lease, env);
  }

  Replay(String workflow, Task task, Journal journal, Lease lease, RunEnvironment env) {
    this.workflow = workflow;
    this.task = task;
    this.state = new RunStateMap(journal);
    journal.onReplayedState(state::replayed);
    journal.onPassedUpdate(state::updatePassed);
    StepTracing tracing = new StepTracing(env.tracer(), workflow, task);
    this.completion = new RunCompletion(lease, journal, env.hook(), state, env.clock());
    this.steps =
        new StepExecution(
            journal,
            completion,
            lease,
            tracing,
            cancellation,
            task.attempt(),
            task.stepOptions(),
            env,
            state);
    this.parallel = new ParallelSteps(journal, steps, lease, tracing, cancellation, env);
    this.composition = new Composition(journal, completion, lease, tracing, steps, env.clock());
    this.values = new JournaledValues(journal, completion, steps, env.clock());
    this.streams = new RunStreams(lease, steps::beforeBodyWrite);
    this.attributes =
        set ->
            values.attributes(
                Transport.JSON.valueToTree(new java.util.LinkedHashMap<>(set)),
                lease::setAttributes);
  }

  /** Ends the run with the body's result (and the last step's completion, if unsent). */
  public String finish(Object output) {
    return completion.finish(output);
  }

  /** Ends the run as failed with {@code error} (and the last step's completion, if unsent). */
  public String fail(Throwable error) {
    return completion.fail(error);
  }

  /** Hands the task back untouched, to be picked up again after {@code delay}. */
  public String release(Duration delay) {
    return completion.release(delay);
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
    return steps.attempt();
  }

  @Override
  public Cancellation cancellation() {
    return cancellation;
  }

  @Override
  public Instant now() {
    return values.now();
  }

  @Override
  public UUID randomUUID() {
    return values.randomUUID();
  }

  @Override
  public Random random() {
    return values.random();
  }

  @Override
  public boolean patched(String changeId) {
    return values.patched(changeId);
  }

  @Override
  public RunStream stream(String name) {
    return streams.stream(name);
  }

  @Override
  public <T> T continueAsNew(Object input) {
    steps.checkOutsideStepFor("continueAsNew");
    throw completion.continueAsNew(input);
  }

  @Override
  public RunState state() {
    return state;
  }

  @Override
  public Attributes attributes() {
    return attributes;
  }

  // ---- StepContext

  @Override
  public StepContext onWorkers(Map<String, String> labels) {
    return new LabelledSteps(this, steps, selector(labels), false);
  }

  @Override
  public StepContext preferWorkers(Map<String, String> labels) {
    return new LabelledSteps(this, steps, selector(labels), true);
  }

  private static Map<String, String> selector(Map<String, String> labels) {
    try {
      return Map.copyOf(Labels.check("labels", labels, 1));
    } catch (Labels.Invalid e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  @Override
  public <T> T run(String name, Class<T> type, Fn<T> fn) {
    return steps.run(name, type, fn, Retry.DEFAULT);
  }

  @Override
  public <T> T run(String name, Class<T> type, Fn<T> fn, Retry retry) {
    return steps.run(name, type, fn, retry);
  }

  @Override
  public <T> T run(String name, TypeRef<T> type, Fn<T> fn, Retry retry) {
    return steps.run(name, type.type(), fn, retry);
  }

  @Override
  public void run(String name, Action action) {
    run(name, action, Retry.DEFAULT);
  }

  @Override
  public void run(String name, Action action, Retry retry) {
    steps.run(
        name,
        Void.class,
        () -> {
          action.run();
          return null;
        },
        retry);
  }

  @Override
  public <T> List<T> parallel(List<? extends Branch<? extends T>> branches) {
    return parallel.run(branches);
  }

  @Override
  public void sleep(String name, Duration duration) {
    steps.sleep(name, duration);
  }

  @Override
  public <T> Optional<T> waitForEvent(String name, Class<T> type, Match match, Duration timeout) {
    return steps.waitForEvent(name, type, match, timeout);
  }

  @Override
  public <T> Optional<T> waitForEvent(String name, TypeRef<T> type, Match match, Duration timeout) {
    return steps.waitForEvent(name, type.type(), match, timeout);
  }

  @Override
  public Callback callback(String name, Duration timeout) {
    return steps.callback(name, timeout);
  }

  @Override
  public <I, O> ChildRun<O> startChild(String name, Workflow<I, O> workflow, I input) {
    return startChild(name, workflow, input, null);
  }

  @Override
  public <I, O> ChildRun<O> startChild(
      String name, Workflow<I, O> workflow, I input, ChildOptions options) {
    return composition.startChild(name, workflow.name(), input, workflow.outputType(), options);
  }

  @Override
  public <O> ChildRun<O> startChild(
      String name, String workflow, Object input, Class<O> output, ChildOptions options) {
    return composition.startChild(name, workflow, input, output, options);
  }

  @Override
  public Fired waitForAny(String name, Duration timeout, Arm... arms) {
    return composition.await(name, arms == null ? null : List.of(arms), false, timeout);
  }

  @Override
  public Fired waitForAll(String name, Duration timeout, Arm... arms) {
    return composition.await(name, arms == null ? null : List.of(arms), true, timeout);
  }
}
