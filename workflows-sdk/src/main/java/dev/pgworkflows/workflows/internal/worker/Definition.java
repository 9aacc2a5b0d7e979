package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.protocol.CancelOnRule;
import dev.pgworkflows.protocol.ConcurrencyLimit;
import dev.pgworkflows.protocol.ThrottleSettings;
import dev.pgworkflows.protocol.WorkerRouting;
import dev.pgworkflows.workflows.Schedule;
import dev.pgworkflows.workflows.WorkflowBody;
import dev.pgworkflows.workflows.internal.replay.UpdateHandlers;
import java.lang.reflect.Type;
import java.util.List;

/**
 * What a worker needs of a workflow definition: its name, version, input type and body, and what it
 * registers when it starts: its schedules, its concurrency limit per key, its throttle and its
 * routing (null: none) and its cancel-on rules; and the handlers of its updates.
 */
public record Definition<I, O>(
    String name,
    int version,
    Type inputType,
    WorkflowBody<I, O> body,
    List<Schedule> schedules,
    ConcurrencyLimit concurrency,
    ThrottleSettings throttle,
    WorkerRouting routing,
    List<CancelOnRule> cancelOn,
    UpdateHandlers updates) {

  public Definition {
    schedules = List.copyOf(schedules);
    cancelOn = List.copyOf(cancelOn);
    updates = updates == null ? new UpdateHandlers() : updates.copy();
  }

  /** A definition without a concurrency limit or a throttle. */
  public Definition(
      String name, int version, Type inputType, WorkflowBody<I, O> body, List<Schedule> schedules) {
    this(name, version, inputType, body, schedules, null, null, null, List.of(), null);
  }

  /** A definition without schedules. */
  public Definition(String name, int version, Type inputType, WorkflowBody<I, O> body) {
    this(name, version, inputType, body, List.of(), null, null, null, List.of(), null);
  }
}
