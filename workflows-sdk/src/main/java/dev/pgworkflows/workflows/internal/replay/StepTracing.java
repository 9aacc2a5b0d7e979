package dev.pgworkflows.workflows.internal.replay;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.util.function.Supplier;

/**
 * The spans of a run's steps, children of the run span the server chose at start (the task's {@code
 * traceContext}), so one run reads as one trace.
 */
final class StepTracing {
  private final Tracer tracer;
  private final Context runContext;
  private final String workflow;
  private final long runId;

  StepTracing(Tracer tracer, String workflow, Task task) {
    this.tracer = tracer;
    this.runContext = runContext(task.traceContext());
    this.workflow = workflow;
    this.runId = task.runId();
  }

  /** The run span as the parent of this run's step spans; the root when there is none. */
  private static Context runContext(String trace) {
    Context root = Context.root();
    if (trace == null) {
      return root;
    }
    String[] p = trace.split("-");
    if (p.length != 3) {
      return root;
    }
    SpanContext run =
        SpanContext.createFromRemoteParent(
            p[0], p[1], TraceFlags.getSampled(), TraceState.getDefault());
    return run.isValid() ? root.with(Span.wrap(run)) : root;
  }

  /** A started span for step {@code name}; the caller ends it. */
  Span start(String name, String kind, int attempt) {
    return tracer
        .spanBuilder("workflow.step")
        .setParent(runContext)
        .setAttribute("workflow.name", workflow)
        .setAttribute("run_id", runId)
        .setAttribute("step.name", name)
        .setAttribute("step.kind", kind)
        .setAttribute("step.attempt", (long) attempt)
        .startSpan();
  }

  /** A started span for update {@code update} (id {@code updateId}); the caller ends it. */
  Span update(String update, long updateId) {
    return tracer
        .spanBuilder("workflow.update")
        .setParent(runContext)
        .setAttribute("workflow.name", workflow)
        .setAttribute("run_id", runId)
        .setAttribute("update.name", update)
        .setAttribute("update.id", updateId)
        .startSpan();
  }

  /** Runs {@code call} inside a span of its own for step {@code name}. */
  <T> T traced(String name, String kind, int attempt, Supplier<T> call) {
    Span span = start(name, kind, attempt);
    Scope scope = span.makeCurrent();
    try {
      return call.get();
    } finally {
      scope.close();
      span.end();
    }
  }
}
