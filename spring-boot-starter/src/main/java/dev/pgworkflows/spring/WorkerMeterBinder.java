package dev.pgworkflows.spring;

import dev.pgworkflows.workflows.WorkerMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The workers' counts ({@link dev.pgworkflows.workflows.Worker#metrics()}) as meters, tagged with
 * the workflow: {@code pgworkflows.worker.tasks}, {@code pgworkflows.worker.steps} ({@code outcome}
 * succeeded or failed: step attempts), {@code pgworkflows.worker.runs} ({@code outcome} completed
 * or failed), and the gauges {@code pgworkflows.worker.slots} and {@code
 * pgworkflows.worker.slots.busy}. Meters read the workers when scraped; the workers count nothing
 * more for them.
 */
public final class WorkerMeterBinder implements MeterBinder {
  private final WorkflowWorkers workers;
  private final List<String> workflows;

  /** Meters for {@code workflows}, whose workers start later than meters are bound. */
  public WorkerMeterBinder(WorkflowWorkers workers, List<String> workflows) {
    this.workers = workers;
    this.workflows = List.copyOf(workflows);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    for (String workflow : workflows) {
      Tags tags = Tags.of("workflow", workflow);
      counter(registry, "pgworkflows.worker.tasks", "tasks taken", tags, workflow, m -> m.tasks());
      counter(
          registry,
          "pgworkflows.worker.steps",
          "step attempts run",
          tags.and("outcome", "succeeded"),
          workflow,
          m -> m.stepsSucceeded());
      counter(
          registry,
          "pgworkflows.worker.steps",
          "step attempts run",
          tags.and("outcome", "failed"),
          workflow,
          m -> m.stepsFailed());
      counter(
          registry,
          "pgworkflows.worker.runs",
          "runs ended by this worker",
          tags.and("outcome", "completed"),
          workflow,
          m -> m.runsCompleted());
      counter(
          registry,
          "pgworkflows.worker.runs",
          "runs ended by this worker",
          tags.and("outcome", "failed"),
          workflow,
          m -> m.runsFailed());
      Gauge.builder("pgworkflows.worker.slots", workers, w -> w.metrics(workflow).slots())
          .description("runs the worker handles at once")
          .tags(tags)
          .register(registry);
      Gauge.builder("pgworkflows.worker.slots.busy", workers, w -> w.metrics(workflow).busySlots())
          .description("slots handling a run now")
          .tags(tags)
          .register(registry);
    }
  }

  private void counter(
      MeterRegistry registry,
      String name,
      String description,
      Tags tags,
      String workflow,
      ToDoubleFunction<WorkerMetrics> value) {
    FunctionCounter.builder(name, workers, w -> value.applyAsDouble(w.metrics(workflow)))
        .description(description)
        .tags(tags)
        .register(registry);
  }
}
