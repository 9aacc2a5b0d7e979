package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.workflows.WorkflowBody;
import java.lang.reflect.Type;

/** What a worker needs of a workflow definition: its name, version, input type and body. */
public record Definition<I, O>(String name, int version, Type inputType, WorkflowBody<I, O> body) {}
