package dev.pgworkflows.server.internal.telemetry;

import dev.pgworkflows.engine.internal.telemetry.RunTrace;
import dev.pgworkflows.engine.internal.telemetry.TraceIds;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * OpenTelemetry for the server's requests: a SERVER span per HTTP request (continuing the caller's
 * W3C context), the trace identity of runs started in it, and {@code workflow.signal} spans. The
 * spans of runs and their steps' writes are {@link RunSpans}. Exports over OTLP as {@link
 * #fromEnvironment} says.
 */
public final class Tracing {
  private static final String SPAN = "otel.span";

  /** Span ids are random, except when a run span must get the id its steps already point to. */
  public static final IdGenerator ID_GENERATOR =
      new IdGenerator() {
        @Override
        public String generateSpanId() {
          String preset = TraceIds.NEXT_SPAN_ID.get();
          return preset != null ? preset : IdGenerator.random().generateSpanId();
        }

        @Override
        public String generateTraceId() {
          return IdGenerator.random().generateTraceId();
        }
      };

  private final OpenTelemetry otel;
  private final Tracer tracer;

  public Tracing(OpenTelemetry otel) {
    this.otel = otel;
    this.tracer = otel.getTracer("dev.pgworkflows.server");
  }

  /**
   * The SDK configured from {@code env}: OTLP_ENABLED, OTLP_ENDPOINT and the standard OTEL_*
   * variables. Export is on when {@code env} enables it: {@code OTLP_ENABLED=true}, a non-blank
   * OTLP endpoint in any spelling ({@code OTLP_ENDPOINT}, {@code OTEL_EXPORTER_OTLP_ENDPOINT},
   * {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}), or an {@code OTEL_TRACES_EXPORTER} other than
   * {@code none}. Off, nothing else is read and no exporter or thread starts (spans are still made,
   * so runs carry a trace identity to their workers). On, {@code env}'s values win; the process's
   * {@code OTEL_*} variables and {@code -Dotel.*} properties, which autoconfiguration also reads,
   * only fill in what {@code env} leaves unset; the protocol is {@code http/protobuf} unless one is
   * set. Nothing is exported but traces, whatever any setting says: the server's metrics are its
   * Prometheus {@code /metrics}. The caller closes it, which exports the spans still held.
   */
  public static OpenTelemetrySdk fromEnvironment(Map<String, String> env) {
    Map<String, String> explicit = new HashMap<>();
    env.forEach(
        (name, value) -> {
          if (name.startsWith("OTEL_") && value != null && !value.isBlank()) {
            explicit.put(name.toLowerCase(Locale.ROOT).replace('_', '.'), value);
          }
        });
    String endpoint = env.get("OTLP_ENDPOINT");
    if (endpoint != null && !endpoint.isBlank()) {
      explicit.put("otel.exporter.otlp.endpoint", endpoint);
    }
    String tracesExporter = explicit.get("otel.traces.exporter");
    boolean export =
        "true".equalsIgnoreCase(env.get("OTLP_ENABLED"))
            || explicit.containsKey("otel.exporter.otlp.endpoint")
            || explicit.containsKey("otel.exporter.otlp.traces.endpoint")
            || (tracesExporter != null && !tracesExporter.equalsIgnoreCase("none"));
    if (!export) {
      return local();
    }
    return AutoConfiguredOpenTelemetrySdk.builder()
        .addPropertiesSupplier(() -> Map.of("otel.service.name", "pgworkflows"))
        .addPropertiesCustomizer(
            merged -> {
              Map<String, String> overrides = new HashMap<>(explicit);
              if (merged.getString("otel.exporter.otlp.protocol") == null
                  && !overrides.containsKey("otel.exporter.otlp.protocol")) {
                overrides.put("otel.exporter.otlp.protocol", "http/protobuf");
              }
              // Export was turned on here: a process's OTEL_TRACES_EXPORTER=none cannot undo it.
              overrides.putIfAbsent("otel.traces.exporter", "otlp");
              overrides.put("otel.metrics.exporter", "none");
              overrides.put("otel.logs.exporter", "none");
              return overrides;
            })
        .addTracerProviderCustomizer((b, cfg) -> b.setIdGenerator(ID_GENERATOR))
        .disableShutdownHook()
        .build()
        .getOpenTelemetrySdk();
  }

  /**
   * The process's settings as {@link #fromEnvironment} reads them: its environment, with its {@code
   * -Dotel.*} properties as the {@code OTEL_*} variables they stand for (and which they override,
   * as in autoconfiguration).
   */
  public static Map<String, String> processSettings() {
    Map<String, String> settings = new HashMap<>(System.getenv());
    System.getProperties()
        .forEach(
            (key, value) -> {
              String name = key.toString();
              if (name.startsWith("otel.")) {
                settings.put(
                    name.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_'),
                    value.toString());
              }
            });
    return settings;
  }

  /** Spans made and dropped: no processor, no exporter, no thread. */
  private static OpenTelemetrySdk local() {
    return OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().setIdGenerator(ID_GENERATOR).build())
        .setPropagators(
            ContextPropagators.create(
                TextMapPropagator.composite(
                    W3CTraceContextPropagator.getInstance(), W3CBaggagePropagator.getInstance())))
        .build();
  }

  /** A request begins: its server span starts, as the child of the caller's trace context. */
  public void requestStarted(io.javalin.http.Context ctx) {
    io.opentelemetry.context.Context parent =
        otel.getPropagators()
            .getTextMapPropagator()
            .extract(io.opentelemetry.context.Context.root(), ctx, javalinGetter());
    Span span =
        tracer
            .spanBuilder("HTTP " + ctx.method().name())
            .setParent(parent)
            .setSpanKind(SpanKind.SERVER)
            .setAttribute("http.request.method", ctx.method().name())
            .setAttribute("url.path", ctx.path())
            .startSpan();
    ctx.attribute(SPAN, span);
  }

  /** A request ends: its span is named for its route template (null for an unknown path). */
  public void requestEnded(io.javalin.http.Context ctx, String route) {
    Span span = ctx.attribute(SPAN);
    if (span == null) {
      return;
    }
    if (route != null) {
      span.updateName(ctx.method().name() + " " + route);
      span.setAttribute("http.route", route);
    }
    span.setAttribute("http.response.status_code", (long) ctx.statusCode());
    if (ctx.statusCode() >= 500) {
      span.setStatus(StatusCode.ERROR);
    }
    span.end();
  }

  /** The current request's span as a parent context. */
  public io.opentelemetry.context.Context context(io.javalin.http.Context ctx) {
    Span span = ctx.attribute(SPAN);
    return span == null
        ? io.opentelemetry.context.Context.root()
        : io.opentelemetry.context.Context.root().with(span);
  }

  /** A trace identity for a run starting in this request: a child of the request's span. */
  public RunTrace newRun(io.javalin.http.Context ctx) {
    Span span = ctx.attribute(SPAN);
    if (span == null || !span.getSpanContext().isValid()) {
      return null;
    }
    return new RunTrace(
        span.getSpanContext().getTraceId(),
        IdGenerator.random().generateSpanId(),
        span.getSpanContext().getSpanId());
  }

  /**
   * The trace identity of a run started as one item of a batch: a child of the span named by the
   * item's {@code traceparent} (its caller's), since callers share the request; the request's span
   * when the item carries none.
   */
  public RunTrace newRun(io.javalin.http.Context ctx, String traceparent) {
    if (traceparent != null) {
      SpanContext caller =
          Span.fromContext(
                  otel.getPropagators()
                      .getTextMapPropagator()
                      .extract(
                          io.opentelemetry.context.Context.root(),
                          traceparent,
                          TraceIds.TRACEPARENT_ONLY))
              .getSpanContext();
      if (caller.isValid()) {
        return new RunTrace(
            caller.getTraceId(), IdGenerator.random().generateSpanId(), caller.getSpanId());
      }
    }
    return newRun(ctx);
  }

  /**
   * A {@code workflow.signal} span inside the current request; {@code outcome} is delivered,
   * buffered or duplicate.
   */
  public void signalled(
      io.javalin.http.Context ctx, String workflow, long runId, String event, String outcome) {
    tracer
        .spanBuilder("workflow.signal")
        .setParent(context(ctx))
        .setAttribute("workflow.name", workflow)
        .setAttribute("run_id", runId)
        .setAttribute("event", event)
        .setAttribute("outcome", outcome)
        .setAttribute("delivered", "delivered".equals(outcome))
        .startSpan()
        .end();
  }

  private static TextMapGetter<io.javalin.http.Context> javalinGetter() {
    return new TextMapGetter<>() {
      @Override
      @SuppressWarnings("deprecation") // required by the interface; only get() is used
      public Iterable<String> keys(io.javalin.http.Context c) {
        return c.headerMap().keySet();
      }

      @Override
      public String get(io.javalin.http.Context c, String key) {
        return c == null ? null : c.header(key);
      }
    };
  }
}
