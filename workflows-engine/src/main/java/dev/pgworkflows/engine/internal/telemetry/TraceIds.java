package dev.pgworkflows.engine.internal.telemetry;

import io.opentelemetry.context.propagation.TextMapGetter;

/**
 * What the engine's run spans share with the host's tracer: the span id the next span must take (a
 * run span gets the id its steps already point to), and a reader of a lone {@code traceparent}.
 */
public final class TraceIds {
  /** Read by the host's id generator: when set, the id of the next span it makes. */
  public static final ThreadLocal<String> NEXT_SPAN_ID = new ThreadLocal<>();

  /** Reads a lone {@code traceparent} value as a carrier. */
  public static final TextMapGetter<String> TRACEPARENT_ONLY =
      new TextMapGetter<>() {
        @Override
        @SuppressWarnings("deprecation") // required by the interface; only get() is used
        public Iterable<String> keys(String carrier) {
          return java.util.List.of("traceparent");
        }

        @Override
        public String get(String carrier, String key) {
          return "traceparent".equals(key) ? carrier : null;
        }
      };

  private TraceIds() {}
}
