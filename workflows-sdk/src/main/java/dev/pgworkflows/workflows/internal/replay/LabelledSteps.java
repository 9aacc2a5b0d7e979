package dev.pgworkflows.workflows.internal.replay;

import dev.pgworkflows.workflows.Arm;
import dev.pgworkflows.workflows.Branch;
import dev.pgworkflows.workflows.Callback;
import dev.pgworkflows.workflows.ChildOptions;
import dev.pgworkflows.workflows.ChildRun;
import dev.pgworkflows.workflows.Fired;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.Retry;
import dev.pgworkflows.workflows.StepContext;
import dev.pgworkflows.workflows.TypeRef;
import dev.pgworkflows.workflows.Workflow;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A run's steps whose new run steps and parallel groups need a worker with some labels ({@link
 * StepContext#onWorkers}): on a worker without them, the task goes to workers that have them before
 * such a step starts. Sleeps, waits and children run no code here and pass straight through.
 */
final class LabelledSteps implements StepContext {
  private final StepContext steps;
  private final StepExecution execution;
  private final Map<String, String> labels;
  private final boolean soft;

  LabelledSteps(
      StepContext steps, StepExecution execution, Map<String, String> labels, boolean soft) {
    this.steps = steps;
    this.execution = execution;
    this.labels = labels;
    this.soft = soft;
  }

  @Override
  public <T> T run(String name, Class<T> type, Fn<T> fn) {
    return execution.needing(labels, soft, () -> steps.run(name, type, fn));
  }

  @Override
  public <T> T run(String name, Class<T> type, Fn<T> fn, Retry retry) {
    return execution.needing(labels, soft, () -> steps.run(name, type, fn, retry));
  }

  @Override
  public <T> T run(String name, TypeRef<T> type, Fn<T> fn, Retry retry) {
    return execution.needing(labels, soft, () -> steps.run(name, type, fn, retry));
  }

  @Override
  public void run(String name, Action action) {
    run(name, action, Retry.DEFAULT);
  }

  @Override
  public void run(String name, Action action, Retry retry) {
    execution.needing(
        labels,
        soft,
        () -> {
          steps.run(name, action, retry);
          return null;
        });
  }

  @Override
  public <T> List<T> parallel(List<? extends Branch<? extends T>> branches) {
    return execution.needing(labels, soft, () -> steps.parallel(branches));
  }

  @Override
  public StepContext onWorkers(Map<String, String> labels) {
    return steps.onWorkers(labels);
  }

  @Override
  public StepContext preferWorkers(Map<String, String> labels) {
    return steps.preferWorkers(labels);
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
    return steps.waitForEvent(name, type, match, timeout);
  }

  @Override
  public Callback callback(String name, Duration timeout) {
    return steps.callback(name, timeout);
  }

  @Override
  public <I, O> ChildRun<O> startChild(String name, Workflow<I, O> workflow, I input) {
    return steps.startChild(name, workflow, input);
  }

  @Override
  public <I, O> ChildRun<O> startChild(
      String name, Workflow<I, O> workflow, I input, ChildOptions options) {
    return steps.startChild(name, workflow, input, options);
  }

  @Override
  public <O> ChildRun<O> startChild(
      String name, String workflow, Object input, Class<O> output, ChildOptions options) {
    return steps.startChild(name, workflow, input, output, options);
  }

  @Override
  public Fired waitForAny(String name, Duration timeout, Arm... arms) {
    return steps.waitForAny(name, timeout, arms);
  }

  @Override
  public Fired waitForAll(String name, Duration timeout, Arm... arms) {
    return steps.waitForAll(name, timeout, arms);
  }
}
