package dev.pgworkflows.server.internal.telemetry;

import dev.pgworkflows.server.internal.http.RequestHooks;
import dev.pgworkflows.server.internal.http.RouteTemplates;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.trace.IdGenerator;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * OpenTelemetry for the server's requests: a SERVER span per HTTP request (continuing the caller's
 * W3C context), the trace identity of runs started in it, and {@code workflow.signal} spans. The
 * spans of runs and their steps' writes are {@link RunSpans}. Exports over OTLP when {@code
 * OTLP_ENABLED=true} or {@code OTLP_ENDPOINT} or {@code OTEL_EXPORTER_OTLP_ENDPOINT} is set; the
 * other standard {@code OTEL_*} variables work too.
 */
public final class Tracing {
  private static final String SPAN = "otel.span";
  static final ThreadLocal<String> NEXT_SPAN_ID = new ThreadLocal<>();

  /** Span ids are random, except when a run span must get the id its steps already point to. */
  public static final IdGenerator ID_GENERATOR =
      new IdGenerator() {
        @Override
        public String generateSpanId() {
          String preset = NEXT_SPAN_ID.get();
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
   * The SDK configured from the environment: OTLP_ENABLED, OTLP_ENDPOINT and the standard OTEL_*
   * variables, {@code env}'s as well as the process's (which autoconfiguration also reads, and
   * which win). An OTLP endpoint, in either spelling, turns trace export on. Nothing is exported
   * but traces: the server's metrics are its Prometheus {@code /metrics}. The caller closes it,
   * which exports the spans still held.
   */
  public static OpenTelemetrySdk fromEnvironment(Map<String, String> env) {
    Map<String, String> props = new HashMap<>();
    env.forEach(
        (name, value) -> {
          if (name.startsWith("OTEL_")) {
            props.put(name.toLowerCase(Locale.ROOT).replace('_', '.'), value);
          }
        });
    props.putIfAbsent("otel.service.name", "pgworkflows");
    boolean otlp =
        "true".equalsIgnoreCase(env.get("OTLP_ENABLED"))
            || env.containsKey("OTLP_ENDPOINT")
            || env.containsKey("OTEL_EXPORTER_OTLP_ENDPOINT")
            || env.containsKey("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    if (env.containsKey("OTLP_ENDPOINT")) {
      props.put("otel.exporter.otlp.endpoint", env.get("OTLP_ENDPOINT"));
    }
    if (!otlp && !env.containsKey("OTEL_TRACES_EXPORTER")) {
      props.put("otel.traces.exporter", "none");
    }
    props.put("otel.metrics.exporter", "none");
    props.put("otel.logs.exporter", "none");
    return AutoConfiguredOpenTelemetrySdk.builder()
        .addPropertiesSupplier(() -> props)
        .addTracerProviderCustomizer((b, cfg) -> b.setIdGenerator(ID_GENERATOR))
        .disableShutdownHook()
        .build()
        .getOpenTelemetrySdk();
  }

  public void register(RequestHooks hooks, RouteTemplates templates) {
    hooks.before(this::startHttpSpan).after(ctx -> endHttpSpan(ctx, templates));
  }

  private void startHttpSpan(io.javalin.http.Context ctx) {
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

  private void endHttpSpan(io.javalin.http.Context ctx, RouteTemplates templates) {
    Span span = ctx.attribute(SPAN);
    if (span == null) {
      return;
    }
    String route = templates.of(ctx);
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
                          io.opentelemetry.context.Context.root(), traceparent, TRACEPARENT_ONLY))
              .getSpanContext();
      if (caller.isValid()) {
        return new RunTrace(
            caller.getTraceId(), IdGenerator.random().generateSpanId(), caller.getSpanId());
      }
    }
    return newRun(ctx);
  }

  /** Reads a lone {@code traceparent} value as a carrier. */
  static final TextMapGetter<String> TRACEPARENT_ONLY =
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
