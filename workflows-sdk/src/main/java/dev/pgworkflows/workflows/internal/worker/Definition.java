package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.workflows.Schedule;
import dev.pgworkflows.workflows.WorkflowBody;
import java.lang.reflect.Type;
import java.util.List;

/**
 * What a worker needs of a workflow definition: its name, version, input type and body, and the
 * schedules it registers when it starts.
 */
public record Definition<I, O>(
    String name, int version, Type inputType, WorkflowBody<I, O> body, List<Schedule> schedules) {

  public Definition {
    schedules = List.copyOf(schedules);
  }

  /** A definition without schedules. */
  public Definition(String name, int version, Type inputType, WorkflowBody<I, O> body) {
    this(name, version, inputType, body, List.of());
  }
}
