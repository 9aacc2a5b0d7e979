package dev.pgworkflows.engine.internal.telemetry;

import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;

/**
 * The trace identity of a run, fixed at start and kept in {@code workflow_run.trace_context} as
 * {@code <trace id>-<run span id>-<parent span id>}: workers parent their step spans on the run
 * span, and the server emits the run span itself, with that id, when the run ends.
 */
public record RunTrace(String traceId, String runSpanId, String parentSpanId) {

  public String encode() {
    return traceId + "-" + runSpanId + "-" + parentSpanId;
  }

  /** Null when the text is absent or malformed. */
  public static RunTrace decode(String text) {
    if (text == null) {
      return null;
    }
    String[] p = text.split("-");
    if (p.length != 3 || p[0].length() != 32 || p[1].length() != 16 || p[2].length() != 16) {
      return null;
    }
    return new RunTrace(p[0], p[1], p[2]);
  }

  public SpanContext parent() {
    return SpanContext.createFromRemoteParent(
        traceId, parentSpanId, TraceFlags.getSampled(), TraceState.getDefault());
  }
}
