package dev.pgworkflows.server.internal.tracing;

import dev.pgworkflows.server.internal.http.RequestHooks;
import dev.pgworkflows.server.internal.http.RouteTemplates;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.trace.IdGenerator;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * OpenTelemetry for the server: a SERVER span per HTTP request (continuing the caller's W3C
 * context), {@code workflow.signal} spans, and {@code workflow.run} spans emitted when a run ends
 * with the span id chosen at its start. Exports over OTLP when {@code OTLP_ENABLED=true} or {@code
 * OTLP_ENDPOINT} is set; the standard {@code OTEL_*} variables work too.
 */
public final class Tracing {
  private static final String SPAN = "otel.span";
  private static final ThreadLocal<String> NEXT_SPAN_ID = new ThreadLocal<>();

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

  /** The SDK configured from the environment (OTLP_ENABLED, OTLP_ENDPOINT, OTEL_*). */
  public static OpenTelemetry fromEnvironment(Map<String, String> env) {
    Map<String, String> props = new HashMap<>();
    props.put("otel.service.name", env.getOrDefault("OTEL_SERVICE_NAME", "pgworkflows"));
    boolean otlp =
        "true".equalsIgnoreCase(env.get("OTLP_ENABLED")) || env.containsKey("OTLP_ENDPOINT");
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

  /** Emits the {@code workflow.run} span of a run that just ended. */
  public void runEnded(
      RunTrace trace, String workflow, int version, long runId, String status, Instant startedAt) {
    if (trace == null) {
      return;
    }
    NEXT_SPAN_ID.set(trace.runSpanId());
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
      if ("failed".equals(status)) {
        span.setStatus(StatusCode.ERROR);
      }
      span.end();
    } finally {
      NEXT_SPAN_ID.remove();
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
            .extract(io.opentelemetry.context.Context.root(), traceparent, TRACEPARENT_ONLY);
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

  private static final TextMapGetter<String> TRACEPARENT_ONLY =
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

  /** A {@code workflow.signal} span inside the current request. */
  public void signalled(
      io.javalin.http.Context ctx, String workflow, long runId, String event, boolean delivered) {
    tracer
        .spanBuilder("workflow.signal")
        .setParent(context(ctx))
        .setAttribute("workflow.name", workflow)
        .setAttribute("run_id", runId)
        .setAttribute("event", event)
        .setAttribute("delivered", delivered)
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
