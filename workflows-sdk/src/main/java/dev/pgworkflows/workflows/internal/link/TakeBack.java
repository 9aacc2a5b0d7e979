package dev.pgworkflows.workflows.internal.link;

import dev.pgworkflows.workflows.internal.replay.Task;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * How a worker's completions that free a slot (a run that ended or was handed back) bring the next
 * tasks with their answer: the terms of the worker's polls, whether it still takes tasks, and where
 * a task goes. A task is handed over on the thread whose completion brought it, before that
 * completion returns.
 */
public record TakeBack(
    List<Integer> versions, long leaseSeconds, BooleanSupplier open, Consumer<Task> handed) {

  public TakeBack {
    versions = List.copyOf(versions);
  }
}
