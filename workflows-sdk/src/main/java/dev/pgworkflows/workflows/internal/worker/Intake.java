package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.workflows.WorkerOptions;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * What both intakes, the task stream and the long poll, work with: the workflow and the versions it
 * serves, the worker's options, the slots, the runners that run what is taken, the backoff after a
 * failure, and whether the worker is stopping.
 */
abstract class Intake implements TaskIntake {
  final String workflow;
  final String path;
  final List<Integer> versions;
  final WorkerOptions options;
  final Slots slots;
  final Runners runners;
  final Backoff backoff;
  final BooleanSupplier stopping;

  Intake(
      String workflow,
      String route,
      List<Integer> versions,
      WorkerOptions options,
      Slots slots,
      Runners runners,
      Backoff backoff,
      BooleanSupplier stopping) {
    this.workflow = workflow;
    this.path = "/v1/workflows/" + workflow + route;
    this.versions = versions;
    this.options = options;
    this.slots = slots;
    this.runners = runners;
    this.backoff = backoff;
    this.stopping = stopping;
  }
}
