package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.workflows.internal.worker.Definition;
import dev.pgworkflows.workflows.internal.worker.TaskWorker;
import java.lang.reflect.Type;
import java.time.Duration;

/**
 * A workflow definition: a name, a version, input and output types, and its body.
 *
 * <pre>{@code
 * Workflow<Signup, String> onboard = Workflow.define("onboard-user", Signup.class, String.class)
 *     .version(1)
 *     .retention(Duration.ofDays(30))
 *     .run((ctx, in) -> ...);
 * Worker worker = onboard.serve(WorkerOptions.url("http://localhost:7700"));
 * }</pre>
 */
public final class Workflow<I, O> {
  private final String name;
  private final int version;
  private final Duration retention;
  private final Type inputType;
  private final Type outputType;
  private final WorkflowBody<I, O> body;

  private Workflow(Builder<I, O> b, WorkflowBody<I, O> body) {
    this.name = b.name;
    this.version = b.version;
    this.retention = b.retention;
    this.inputType = b.inputType;
    this.outputType = b.outputType;
    this.body = body;
  }

  public static <I, O> Builder<I, O> define(String name, Class<I> input, Class<O> output) {
    return new Builder<>(name, input, output);
  }

  public static <I, O> Builder<I, O> define(String name, TypeRef<I> input, TypeRef<O> output) {
    return new Builder<>(name, input.type(), output.type());
  }

  /** Checks a workflow name the way the server does, before any I/O. */
  public static String checkName(String name) {
    if (!Names.isWorkflowName(name)) {
      throw new IllegalArgumentException(
          "workflow name \""
              + name
              + "\" must be 1 to 43 characters of a-z, 0-9, \"_\" and \"-\", not starting with \"-\"");
    }
    return name;
  }

  /** Builds a definition. */
  public static final class Builder<I, O> {
    private final String name;
    private final Type inputType;
    private final Type outputType;
    private int version = 1;
    private Duration retention = Duration.ofDays(30);

    private Builder(String name, Type inputType, Type outputType) {
      this.name = checkName(name);
      if (inputType == null || outputType == null) {
        throw new IllegalArgumentException("input and output types are required");
      }
      this.inputType = inputType;
      this.outputType = outputType;
    }

    public Builder<I, O> version(int v) {
      if (v < 1) {
        throw new IllegalArgumentException("version must be >= 1, got " + v);
      }
      this.version = v;
      return this;
    }

    /** How long finished runs are kept (whole days, at least one). Default 30 days. */
    public Builder<I, O> retention(Duration d) {
      if (d == null || d.toDays() < 1) {
        throw new IllegalArgumentException("retention must be at least one day");
      }
      this.retention = d;
      return this;
    }

    public Workflow<I, O> run(WorkflowBody<I, O> body) {
      if (body == null) {
        throw new IllegalArgumentException("body must not be null");
      }
      return new Workflow<>(this, body);
    }
  }

  public String name() {
    return name;
  }

  public int version() {
    return version;
  }

  public Duration retention() {
    return retention;
  }

  public Type inputType() {
    return inputType;
  }

  public Type outputType() {
    return outputType;
  }

  public WorkflowBody<I, O> body() {
    return body;
  }

  /**
   * Starts a worker that takes this workflow's runs (from a task stream or by long polls) until
   * closed.
   */
  public Worker serve(WorkerOptions options) {
    return TaskWorker.start(new Definition<>(name, version, inputType, body), options);
  }
}
