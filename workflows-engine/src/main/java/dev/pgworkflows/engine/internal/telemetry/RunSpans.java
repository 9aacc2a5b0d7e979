package dev.pgworkflows.engine.internal.telemetry;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import java.time.Instant;

/**
 * The spans of runs, emitted outside any request's span: {@code workflow.run} when a run ends, with
 * the span id chosen at its start (its steps' spans already point to it), and {@code
 * workflow.complete} for each completion of a batch, a child of the worker's step span.
 */
public final class RunSpans {
  private final OpenTelemetry otel;
  private final Tracer tracer;

  public RunSpans(OpenTelemetry otel) {
    this.otel = otel;
    this.tracer = otel.getTracer("dev.pgworkflows.server");
  }

  /** Emits the {@code workflow.run} span of a run that just ended. */
  public void runEnded(
      RunTrace trace, String workflow, int version, long runId, String status, Instant startedAt) {
    if (trace == null) {
      return;
    }
    TraceIds.NEXT_SPAN_ID.set(trace.runSpanId());
    try {
      Span span =
          tracer
              .spanBuilder("workflow.run")
              .setParent(io.opentelemetry.context.Context.root().with(Span.wrap(trace.parent())))
              .setStartTimestamp(startedAt)
              .setAllAttributes(
                  Attributes.of(
                      AttributeKey.stringKey("workflow.name"), workflow,
                      AttributeKey.longKey("workflow.version"), (long) version,
                      AttributeKey.longKey("run_id"), runId,
                      AttributeKey.stringKey("status"), status))
              .startSpan();
      if ("failed".equals(status) || "timed_out".equals(status)) {
        span.setStatus(StatusCode.ERROR);
      }
      span.end();
    } finally {
      TraceIds.NEXT_SPAN_ID.remove();
    }
  }

  /**
   * A {@code workflow.complete} span for one completion of a batch, a child of the step span named
   * by {@code traceparent} (the worker's), so each step's journal write shows in its run's trace
   * although many runs share the request. Nothing when the item carries no trace context.
   */
  public void completed(
      String traceparent, Instant at, String workflow, long runId, String step, String outcome) {
    if (traceparent == null) {
      return;
    }
    io.opentelemetry.context.Context parent =
        otel.getPropagators()
            .getTextMapPropagator()
            .extract(
                io.opentelemetry.context.Context.root(), traceparent, TraceIds.TRACEPARENT_ONLY);
    if (!Span.fromContext(parent).getSpanContext().isValid()) {
      return;
    }
    var builder =
        tracer
            .spanBuilder("workflow.complete")
            .setParent(parent)
            .setStartTimestamp(at)
            .setAttribute("workflow.name", workflow)
            .setAttribute("run_id", runId)
            .setAttribute("outcome", outcome);
    if (step != null) {
      builder.setAttribute("step.name", step);
    }
    builder.startSpan().end();
  }
}
