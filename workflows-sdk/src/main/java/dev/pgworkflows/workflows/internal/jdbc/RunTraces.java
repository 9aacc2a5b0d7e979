package dev.pgworkflows.workflows.internal.jdbc;

import dev.pgworkflows.engine.internal.telemetry.RunTrace;
import dev.pgworkflows.engine.internal.telemetry.TraceIds;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The trace identity of a run started from this thread without a server: a child of the current
 * span (a step's), as a server makes it a child of the span of the request that started it.
 */
final class RunTraces {
  private RunTraces() {}

  /**
   * The trace identity of a run whose start carried {@code traceparent} (a batched start's, taken
   * on its caller's thread): a child of the span it names; null without one.
   */
  static RunTrace fromTraceparent(String traceparent) {
    if (traceparent == null) {
      return null;
    }
    SpanContext caller =
        Span.fromContext(
                W3CTraceContextPropagator.getInstance()
                    .extract(Context.root(), traceparent, TraceIds.TRACEPARENT_ONLY))
            .getSpanContext();
    return caller.isValid() ? child(caller) : null;
  }

  /** Null when no span is current. */
  static RunTrace fromCurrentSpan() {
    SpanContext caller = Span.current().getSpanContext();
    return caller.isValid() ? child(caller) : null;
  }

  private static RunTrace child(SpanContext caller) {
    long id;
    do {
      id = ThreadLocalRandom.current().nextLong();
    } while (id == 0);
    return new RunTrace(caller.getTraceId(), SpanId.fromLong(id), caller.getSpanId());
  }
}
