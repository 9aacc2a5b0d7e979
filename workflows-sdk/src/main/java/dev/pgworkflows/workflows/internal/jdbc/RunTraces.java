package dev.pgworkflows.workflows.internal.jdbc;

import dev.pgworkflows.engine.internal.telemetry.RunTrace;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanId;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The trace identity of a run started from this thread without a server: a child of the current
 * span (a step's), as a server makes it a child of the span of the request that started it.
 */
final class RunTraces {
  private RunTraces() {}

  /** Null when no span is current. */
  static RunTrace fromCurrentSpan() {
    SpanContext caller = Span.current().getSpanContext();
    if (!caller.isValid()) {
      return null;
    }
    long id;
    do {
      id = ThreadLocalRandom.current().nextLong();
    } while (id == 0);
    return new RunTrace(caller.getTraceId(), SpanId.fromLong(id), caller.getSpanId());
  }
}
