package dev.pgworkflows.server.testing;

import com.google.protobuf.InvalidProtocolBufferException;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * An OTLP/HTTP receiver on 127.0.0.1, as a collector would be: {@code POST /v1/traces} and {@code
 * POST /v1/metrics} with {@code application/x-protobuf} bodies, decoded and kept; anything else is
 * refused and counted, so a test sees an exporter that sends what it should not.
 */
public final class OtlpReceiver implements AutoCloseable {
  /** A span as it arrived, with the {@code service.name} of its resource and hex ids. */
  public record ReceivedSpan(
      String service,
      String traceId,
      String spanId,
      String parentSpanId,
      String name,
      Map<String, Object> attributes,
      boolean error) {

    public Object attribute(String key) {
      return attributes.get(key);
    }
  }

  /**
   * A metric as it arrived, with the {@code service.name} of its resource and the name of the
   * instrumentation scope that recorded it.
   */
  public record ReceivedMetric(String service, String scope, String name) {}

  private final HttpServer server;
  private final ExecutorService handlers;
  private final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();
  private final List<ReceivedMetric> metrics = new CopyOnWriteArrayList<>();
  private final List<String> refused = new CopyOnWriteArrayList<>();
  private final List<Thread> threads = new CopyOnWriteArrayList<>();

  private OtlpReceiver() {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String threadName = threadName(server.getAddress().getPort());
    handlers =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, threadName);
              threads.add(t);
              return t;
            });
    server.setExecutor(handlers);
    server.createContext("/", this::handle);
    server.start();
  }

  /** A receiver listening on a free loopback port. */
  public static OtlpReceiver start() {
    return new OtlpReceiver();
  }

  /** The name of the thread that answers the receiver on {@code port}. */
  public static String threadName(int port) {
    return "otlp-receiver-" + port;
  }

  /** The base URL, as {@code OTEL_EXPORTER_OTLP_ENDPOINT} takes it. */
  public String endpoint() {
    return "http://127.0.0.1:" + port();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  public List<ReceivedSpan> spans() {
    return List.copyOf(spans);
  }

  public List<ReceivedMetric> metrics() {
    return List.copyOf(metrics);
  }

  /** Requests refused, as {@code METHOD path content-type}: wrong route, method or body. */
  public List<String> refused() {
    return List.copyOf(refused);
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      byte[] body = ex.getRequestBody().readAllBytes();
      String path = ex.getRequestURI().getPath();
      String type = ex.getRequestHeaders().getFirst("Content-Type");
      if (!ex.getRequestMethod().equals("POST") || !"application/x-protobuf".equals(type)) {
        refuse(ex, 415, path, type);
        return;
      }
      byte[] answer;
      try {
        switch (path) {
          case "/v1/traces" -> {
            traces(ExportTraceServiceRequest.parseFrom(body));
            answer = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
          }
          case "/v1/metrics" -> {
            metrics(ExportMetricsServiceRequest.parseFrom(body));
            answer = ExportMetricsServiceResponse.getDefaultInstance().toByteArray();
          }
          default -> {
            refuse(ex, 404, path, type);
            return;
          }
        }
      } catch (InvalidProtocolBufferException e) {
        refuse(ex, 400, path, type);
        return;
      }
      ex.getResponseHeaders().set("Content-Type", "application/x-protobuf");
      ex.sendResponseHeaders(200, answer.length == 0 ? -1 : answer.length);
      ex.getResponseBody().write(answer);
    }
  }

  private void refuse(HttpExchange ex, int status, String path, String type) throws IOException {
    refused.add(ex.getRequestMethod() + " " + path + " " + type);
    ex.sendResponseHeaders(status, -1);
  }

  private void traces(ExportTraceServiceRequest request) {
    HexFormat hex = HexFormat.of();
    for (ResourceSpans rs : request.getResourceSpansList()) {
      String service =
          String.valueOf(values(rs.getResource().getAttributesList()).get("service.name"));
      for (ScopeSpans ss : rs.getScopeSpansList()) {
        for (Span s : ss.getSpansList()) {
          spans.add(
              new ReceivedSpan(
                  service,
                  hex.formatHex(s.getTraceId().toByteArray()),
                  hex.formatHex(s.getSpanId().toByteArray()),
                  hex.formatHex(s.getParentSpanId().toByteArray()),
                  s.getName(),
                  values(s.getAttributesList()),
                  s.getStatus().getCode()
                      == io.opentelemetry.proto.trace.v1.Status.StatusCode.STATUS_CODE_ERROR));
        }
      }
    }
  }

  private void metrics(ExportMetricsServiceRequest request) {
    for (ResourceMetrics rm : request.getResourceMetricsList()) {
      String service =
          String.valueOf(values(rm.getResource().getAttributesList()).get("service.name"));
      for (ScopeMetrics sm : rm.getScopeMetricsList()) {
        for (Metric m : sm.getMetricsList()) {
          metrics.add(new ReceivedMetric(service, sm.getScope().getName(), m.getName()));
        }
      }
    }
  }

  private static Map<String, Object> values(List<KeyValue> attributes) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (KeyValue kv : attributes) {
      out.put(kv.getKey(), value(kv.getValue()));
    }
    return out;
  }

  private static Object value(AnyValue v) {
    return switch (v.getValueCase()) {
      case STRING_VALUE -> v.getStringValue();
      case INT_VALUE -> v.getIntValue();
      case BOOL_VALUE -> v.getBoolValue();
      case DOUBLE_VALUE -> v.getDoubleValue();
      default -> v.toString();
    };
  }

  /** Stops listening and ends its thread; the port is free again when this returns. */
  @Override
  public void close() {
    server.stop(0);
    handlers.shutdownNow();
    try {
      if (!handlers.awaitTermination(5, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the OTLP receiver's thread did not end");
      }
      for (Thread t : threads) {
        t.join(); // the pool is done with it; it may still be on its way out
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
