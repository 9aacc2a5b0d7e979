package dev.pgworkflows.workflows.internal.replay;

import io.opentelemetry.api.trace.Tracer;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;

/**
 * What a worker gives each replay of its runs.
 *
 * @param heartbeats the scheduler that extends leases while steps run
 * @param leaseDuration how long a lease lasts
 * @param stopping whether the worker is closing: a run then stops before its next new step
 * @param tracer where step spans go
 * @param clock wall-clock readings that are journaled (a step's start, {@code ctx.now()}); no
 *     timing is decided by it
 * @param hook test observation points around completions ({@link CompletionHook#NONE})
 * @param counters what the worker counts as its steps run ({@link WorkerCounters#NONE})
 * @param labels the worker's labels: a step that needs others is handed to workers that have them
 */
public record RunEnvironment(
    ScheduledExecutorService heartbeats,
    Duration leaseDuration,
    BooleanSupplier stopping,
    Tracer tracer,
    InstantSource clock,
    CompletionHook hook,
    WorkerCounters counters,
    Map<String, String> labels) {

  public RunEnvironment {
    labels = labels == null ? Map.of() : Map.copyOf(labels);
  }

  /** A worker without labels. */
  public RunEnvironment(
      ScheduledExecutorService heartbeats,
      Duration leaseDuration,
      BooleanSupplier stopping,
      Tracer tracer,
      InstantSource clock,
      CompletionHook hook,
      WorkerCounters counters) {
    this(heartbeats, leaseDuration, stopping, tracer, clock, hook, counters, Map.of());
  }

  /** Without counts (a replay no worker reports on). */
  public RunEnvironment(
      ScheduledExecutorService heartbeats,
      Duration leaseDuration,
      BooleanSupplier stopping,
      Tracer tracer,
      InstantSource clock,
      CompletionHook hook) {
    this(heartbeats, leaseDuration, stopping, tracer, clock, hook, WorkerCounters.NONE);
  }
}
