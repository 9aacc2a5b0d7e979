package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.QueueServer;
import dev.pgworkflows.server.ServerConfig;
import dev.pgworkflows.testing.TestDatabase;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * One run reads as one trace: the server's workflow.run span is the parent of the worker's step
 * spans, HTTP server spans of the worker's calls are children of the step spans, and signals get a
 * workflow.signal span.
 */
class TracingTest {

  /** OpenTelemetry that keeps finished spans in {@code exporter}, with the server's trace ids. */
  private static OpenTelemetrySdk inMemory(InMemorySpanExporter exporter) {
    return OpenTelemetrySdk.builder()
        .setTracerProvider(
            SdkTracerProvider.builder()
                .setIdGenerator(dev.pgworkflows.server.internal.telemetry.Tracing.ID_GENERATOR)
                .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                .build())
        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
        .build();
  }

  /** A server on a fresh database, tracing with {@code otel}. */
  private static QueueServer server(OpenTelemetrySdk otel) {
    TestDatabase db = TestDatabase.fresh();
    return QueueServer.start(
        ServerConfig.from(Map.of("WORKFLOWS_PORT", "0"))
            .withDatabase(db.jdbcUrl(), db.user(), db.password()),
        otel);
  }

  @Test
  void aRunIsOneTraceWithStepsAsChildrenOfTheRunSpan() {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    OpenTelemetrySdk otel = inMemory(exporter);
    try (QueueServer server = server(otel)) {
      String url = "http://localhost:" + server.port();
      Workflow<String, String> wf =
          Workflow.define("traced", String.class, String.class)
              .run(
                  (ctx, in) -> {
                    String a = ctx.step().run("first", String.class, () -> "a");
                    ctx.step().sleep("pause", Duration.ofMillis(100));
                    Optional<String> ok =
                        ctx.step()
                            .waitForEvent(
                                "approve", String.class, Match.any(), Duration.ofSeconds(30));
                    return a + ok.orElse("-");
                  });
      Worker worker =
          wf.serve(WorkerOptions.url(url).pollWait(Duration.ofSeconds(1)).openTelemetry(otel));
      try {
        WorkflowClient client = WorkflowClient.connect(url);
        long run = client.start("traced", "x").runId();
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.runs().get("traced", run).waitingFor() != null);
        assertThat(client.signal("traced", run, "approve", "yes").delivered()).isTrue();
        assertThat(client.runs().awaitResult("traced", run, String.class, Duration.ofSeconds(20)))
            .isEqualTo("ayes");
      } finally {
        worker.close();
      }
      SpanData runSpan = completedRunSpan(exporter, "traced");
      List<SpanData> spans = exporter.getFinishedSpanItems();
      List<SpanData> steps = stepsOf(spans, runSpan, "first", "pause", "approve");
      SpanData first =
          steps.stream()
              .filter(
                  s -> "first".equals(s.getAttributes().get(AttributeKey.stringKey("step.name"))))
              .findFirst()
              .orElseThrow();
      assertThat(spans)
          .as("the server's record of the step's completion is a child of the step span")
          .anyMatch(
              s ->
                  s.getParentSpanId().equals(first.getSpanId())
                      && s.getName().equals("workflow.complete")
                      && "first".equals(s.getAttributes().get(AttributeKey.stringKey("step.name")))
                      && "ok".equals(s.getAttributes().get(AttributeKey.stringKey("outcome"))));
      SpanData start =
          spans.stream()
              .filter(s -> s.getSpanId().equals(runSpan.getParentSpanId()))
              .findFirst()
              .orElseThrow();
      assertThat(start.getName()).isEqualTo("POST /v1/workflows/{name}/runs");
      assertThat(spans).anyMatch(s -> s.getName().equals("workflow.signal"));
    }
  }

  /**
   * Without a server, the engine in the process sends each run's workflow.run span to the
   * OpenTelemetry the application gave it, and the steps are its children there.
   */
  @Test
  void aRunServedOverJdbcIsOneTraceInTheApplicationsOpenTelemetry() {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    OpenTelemetrySdk otel = inMemory(exporter);
    // Started while handling a request of the application's, as a server's start is.
    io.opentelemetry.api.trace.Span request =
        otel.getTracer("app").spanBuilder("POST /orders").startSpan();
    Workflow<String, String> wf =
        Workflow.define("traced-jdbc", String.class, String.class)
            .run(
                (ctx, in) -> {
                  String a = ctx.step().run("first", String.class, () -> "a");
                  ctx.step().sleep("pause", Duration.ofMillis(50));
                  return a + ctx.step().run("second", String.class, () -> "b");
                });
    try (com.zaxxer.hikari.HikariDataSource ds = WithoutAServerTest.pool(TestDatabase.fresh());
        PgWorkflows pgw = PgWorkflows.builder(ds).migrate(false).openTelemetry(otel).start()) {
      pgw.serve(wf);
      long run;
      io.opentelemetry.context.Scope scope = request.makeCurrent();
      try {
        run = pgw.client().start("traced-jdbc", "x").runId();
      } finally {
        scope.close();
        request.end();
      }
      assertThat(
              pgw.client()
                  .runs()
                  .awaitResult("traced-jdbc", run, String.class, Duration.ofSeconds(20)))
          .isEqualTo("ab");
    }
    SpanData runSpan = completedRunSpan(exporter, "traced-jdbc");
    stepsOf(exporter.getFinishedSpanItems(), runSpan, "first", "pause", "second");
    assertThat(runSpan.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
  }

  /** The workflow.run span of the one run of {@code workflow}, once exported: it completed. */
  @Test
  void anUpdateIsASpanOfItsRunsTraceWithItsOutcome() {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    OpenTelemetrySdk otel = inMemory(exporter);
    try (QueueServer server = server(otel)) {
      String url = "http://localhost:" + server.port();
      Workflow<String, String> wf =
          Workflow.define("traced-update", String.class, String.class)
              .onUpdate(
                  "rename",
                  String.class,
                  (ctx, name) -> {
                    ctx.signal("renamed", name);
                    return "ok";
                  })
              .run(
                  (ctx, in) ->
                      ctx.step()
                          .waitForEvent(
                              "renamed", String.class, Match.any(), Duration.ofSeconds(30))
                          .orElse("-"));
      Worker worker =
          wf.serve(WorkerOptions.url(url).pollWait(Duration.ofSeconds(1)).openTelemetry(otel));
      try {
        WorkflowClient client = WorkflowClient.connect(url);
        long run = client.start("traced-update", "x").runId();
        assertThat(client.update("traced-update", run, "rename", "ada", String.class))
            .isEqualTo("ok");
        assertThat(
                client
                    .runs()
                    .awaitResult("traced-update", run, String.class, Duration.ofSeconds(20)))
            .isEqualTo("ada");
      } finally {
        worker.close();
      }
      SpanData runSpan = completedRunSpan(exporter, "traced-update");
      SpanData update =
          exporter.getFinishedSpanItems().stream()
              .filter(s -> s.getName().equals("workflow.update"))
              .findFirst()
              .orElseThrow();
      assertThat(update.getTraceId()).isEqualTo(runSpan.getTraceId());
      assertThat(update.getParentSpanId()).isEqualTo(runSpan.getSpanId());
      assertThat(update.getAttributes().get(AttributeKey.stringKey("update.name")))
          .isEqualTo("rename");
      assertThat(update.getAttributes().get(AttributeKey.stringKey("update.outcome")))
          .isEqualTo("completed");
    }
  }

  private static SpanData completedRunSpan(InMemorySpanExporter exporter, String workflow) {
    Awaitility.await()
        .atMost(10, TimeUnit.SECONDS)
        .until(
            () ->
                exporter.getFinishedSpanItems().stream()
                    .anyMatch(s -> s.getName().equals("workflow.run")));
    SpanData runSpan =
        exporter.getFinishedSpanItems().stream()
            .filter(s -> s.getName().equals("workflow.run"))
            .findFirst()
            .orElseThrow();
    assertThat(runSpan.getAttributes().get(AttributeKey.stringKey("workflow.name")))
        .isEqualTo(workflow);
    assertThat(runSpan.getAttributes().get(AttributeKey.stringKey("status")))
        .isEqualTo("completed");
    assertThat(runSpan.getAttributes().get(AttributeKey.longKey("workflow.version"))).isEqualTo(1L);
    return runSpan;
  }

  /** The workflow.step spans, with these steps among them, each a child of {@code runSpan}. */
  private static List<SpanData> stepsOf(List<SpanData> spans, SpanData runSpan, String... names) {
    List<SpanData> steps = spans.stream().filter(s -> s.getName().equals("workflow.step")).toList();
    assertThat(steps)
        .extracting(s -> s.getAttributes().get(AttributeKey.stringKey("step.name")))
        .contains(names);
    for (SpanData step : steps) {
      assertThat(step.getTraceId()).isEqualTo(runSpan.getTraceId());
      assertThat(step.getParentSpanId()).isEqualTo(runSpan.getSpanId());
      assertThat(step.getAttributes().get(AttributeKey.longKey("step.attempt"))).isNotNull();
    }
    return steps;
  }

  /**
   * Starts made by many threads at once share requests; each run's trace is still its caller's: the
   * workflow.run span is a child of the caller's span (a batched start) or of the server span of
   * the caller's own start request (a lone one).
   */
  @Test
  void concurrentStartsEachJoinTheirCallersTrace() throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    OpenTelemetrySdk otel = inMemory(exporter);
    try (QueueServer server = server(otel)) {
      String url = "http://localhost:" + server.port();
      Workflow<Integer, Integer> wf =
          Workflow.define("crowd-traced", Integer.class, Integer.class)
              .run((ctx, in) -> ctx.step().run("only", Integer.class, () -> in));
      WorkflowClient client = WorkflowClient.connect(url);
      Tracer tracer = otel.getTracer("caller");
      ExecutorService pool = Executors.newFixedThreadPool(16);
      Map<Long, SpanContext> callers = new ConcurrentHashMap<>();
      try {
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
          int input = i;
          fs.add(
              pool.submit(
                  () -> {
                    Span caller = tracer.spanBuilder("caller").startSpan();
                    Scope scope = caller.makeCurrent();
                    try {
                      long run = client.start("crowd-traced", input).runId();
                      callers.put(run, caller.getSpanContext());
                    } finally {
                      scope.close();
                      caller.end();
                    }
                  }));
        }
        for (Future<?> f : fs) {
          f.get(30, TimeUnit.SECONDS);
        }
      } finally {
        pool.shutdownNow();
      }
      Worker worker =
          wf.serve(WorkerOptions.url(url).pollWait(Duration.ofSeconds(1)).openTelemetry(otel));
      try {
        Awaitility.await()
            .atMost(30, TimeUnit.SECONDS)
            .until(
                () ->
                    exporter.getFinishedSpanItems().stream()
                            .filter(s -> s.getName().equals("workflow.run"))
                            .count()
                        == 64);
      } finally {
        worker.close();
      }
      List<SpanData> spans = exporter.getFinishedSpanItems();
      Map<String, SpanData> byId = new HashMap<>();
      spans.forEach(s -> byId.put(s.getSpanId(), s));
      for (SpanData run : spans.stream().filter(s -> s.getName().equals("workflow.run")).toList()) {
        SpanContext caller = callers.get(run.getAttributes().get(AttributeKey.longKey("run_id")));
        assertThat(caller).as("a run started by this test").isNotNull();
        assertThat(run.getTraceId()).isEqualTo(caller.getTraceId());
        SpanData parent = byId.get(run.getParentSpanId());
        assertThat(
                run.getParentSpanId().equals(caller.getSpanId())
                    || (parent != null
                        && parent.getName().equals("POST /v1/workflows/{name}/runs")
                        && parent.getParentSpanId().equals(caller.getSpanId())))
            .as(
                "run %s is a child of its caller's span or of its own start request",
                run.getAttributes().get(AttributeKey.longKey("run_id")))
            .isTrue();
      }
    }
  }
}
