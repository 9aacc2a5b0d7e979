package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.tuple;

import dev.pgworkflows.server.testing.OtlpReceiver;
import dev.pgworkflows.server.testing.OtlpReceiver.ReceivedSpan;
import dev.pgworkflows.server.testing.ServerProcess;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server and a worker, each in a process of its own configured only through the standard {@code
 * OTEL_*} variables, export a run's spans over OTLP/HTTP to a real receiver: one trace, the
 * server's {@code workflow.run} span the parent of the worker's {@code workflow.step} spans, each
 * with its attributes as documented, a retried step with one span per attempt, and the signal's
 * {@code workflow.signal} span. The worker's spans reach the receiver only through the final export
 * its SDK makes when the worker exits on SIGTERM; the server, on its default protocol, exports no
 * metrics even when its variables ask for them.
 */
class OtlpTraceExportTest {
  private static final String SERVER_SERVICE = "orders-server";
  private static final String WORKER_SERVICE = "orders-worker";

  @Test
  void aRunsSpansFromServerAndWorkerProcessesArriveAsOneTrace(@TempDir Path dir) throws Exception {
    int receiverPort;
    try (OtlpReceiver receiver = OtlpReceiver.start()) {
      receiverPort = receiver.port();
      TestDatabase db = TestDatabase.fresh();
      Map<String, String> serverEnv = new HashMap<>(otel(receiver, SERVER_SERVICE));
      // The server's default protocol is OTLP/HTTP, the only one the receiver speaks.
      serverEnv.remove("OTEL_EXPORTER_OTLP_PROTOCOL");
      // Asked for, and still not exported: the server's metrics are its /metrics.
      serverEnv.put("OTEL_METRICS_EXPORTER", "otlp");
      serverEnv.put("OTEL_METRIC_EXPORT_INTERVAL", "200");
      serverEnv.put("DATABASE_URL", db.jdbcUrl());
      serverEnv.put("WORKFLOWS_DATABASE_USER", db.user());
      serverEnv.put("WORKFLOWS_DATABASE_PASSWORD", db.password());
      Map<String, String> workerEnv = new HashMap<>(otel(receiver, WORKER_SERVICE));
      // GlobalOpenTelemetry, which the worker uses, is then the SDK autoconfigured from OTEL_*.
      workerEnv.put("OTEL_JAVA_GLOBAL_AUTOCONFIGURE_ENABLED", "true");
      // Metrics left at their default (otlp), exported often: whatever is measured shows.
      workerEnv.put("OTEL_METRIC_EXPORT_INTERVAL", "200");
      // Longer than the test: the worker's spans can only arrive with its final export at exit.
      workerEnv.put("OTEL_BSP_SCHEDULE_DELAY", "600000");

      long run;
      try (ServerProcess server =
          ServerProcess.start(
              dir,
              ServerProcess.freePort(),
              ServerProcess.freePort(),
              dir.resolve("server.out"),
              serverEnv)) {
        server.awaitReady(Duration.ofSeconds(40));
        Path workerOut = dir.resolve("worker.out");
        Process worker =
            WorkerJvm.start(ExportedWorkflow.class, workerOut, workerEnv, server.url());
        try {
          WorkflowClient client = WorkflowClient.connect(server.url());
          run = client.start(ExportedWorkflow.NAME, "order-1").runId();
          Awaitility.await()
              .atMost(30, TimeUnit.SECONDS)
              .until(() -> client.runs().get(ExportedWorkflow.NAME, run).waitingFor() != null);
          assertThat(client.signal(ExportedWorkflow.NAME, run, "approve", "yes").delivered())
              .isTrue();
          assertThat(
                  client
                      .runs()
                      .awaitResult(
                          ExportedWorkflow.NAME, run, String.class, Duration.ofSeconds(20)))
              .isEqualTo("order-1-fetched/ok/yes");
          Awaitility.await()
              .atMost(15, TimeUnit.SECONDS)
              .until(
                  () ->
                      named(receiver.spans(), "workflow.run", run).size() == 1
                          && named(receiver.spans(), "workflow.signal", run).size() == 1);
          assertThat(named(receiver.spans(), "workflow.step", run))
              .as("the worker's spans, held until it exits")
              .isEmpty();
        } finally {
          worker.destroy(); // SIGTERM: the worker stops and its SDK exports what it holds
          assertThat(worker.waitFor(20, TimeUnit.SECONDS))
              .as("the worker exits on SIGTERM:\n%s", Files.readString(workerOut))
              .isTrue();
        }
        // The final export completes before the worker's JVM ends: nothing to wait for.
        assertThat(named(receiver.spans(), "workflow.step", run))
            .as("the worker's spans, exported as it exited")
            .hasSize(4);
        server.sigterm();
        assertThat(server.awaitExit(Duration.ofSeconds(30))).isEqualTo(143);
      }

      List<ReceivedSpan> spans = receiver.spans();
      Map<String, ReceivedSpan> byId =
          spans.stream()
              .collect(
                  // An exporter that retried a batch the receiver took may send a span twice.
                  Collectors.toMap(ReceivedSpan::spanId, Function.identity(), (a, b) -> a));

      List<ReceivedSpan> runSpans = named(spans, "workflow.run", run);
      assertThat(runSpans).as("one workflow.run span").hasSize(1);
      ReceivedSpan runSpan = runSpans.get(0);
      assertThat(runSpan.service()).isEqualTo(SERVER_SERVICE);
      assertThat(runSpan.attributes())
          .containsEntry("workflow.name", ExportedWorkflow.NAME)
          .containsEntry("workflow.version", 1L)
          .containsEntry("run_id", run)
          .containsEntry("status", "completed");
      assertThat(runSpan.error()).isFalse();
      ReceivedSpan startRequest = byId.get(runSpan.parentSpanId());
      assertThat(startRequest).as("the run span's parent, the start request's span").isNotNull();
      assertThat(startRequest.name()).isEqualTo("POST /v1/workflows/{name}/runs");
      assertThat(startRequest.service()).isEqualTo(SERVER_SERVICE);

      List<ReceivedSpan> steps = named(spans, "workflow.step", run);
      assertThat(steps)
          .extracting(
              s -> s.attribute("step.name"),
              s -> s.attribute("step.kind"),
              s -> s.attribute("step.attempt"),
              ReceivedSpan::error)
          .containsExactlyInAnyOrder(
              tuple("fetch", "run", 1L, false),
              tuple("flaky", "run", 1L, true),
              tuple("flaky", "run", 2L, false),
              tuple("approve", "wait", 1L, false));
      assertThat(steps)
          .allSatisfy(
              s -> {
                assertThat(s.service()).isEqualTo(WORKER_SERVICE);
                assertThat(s.parentSpanId()).isEqualTo(runSpan.spanId());
                assertThat(s.attribute("workflow.name")).isEqualTo(ExportedWorkflow.NAME);
              });
      Set<String> stepIds = steps.stream().map(ReceivedSpan::spanId).collect(Collectors.toSet());
      List<ReceivedSpan> completions = named(spans, "workflow.complete", run);
      assertThat(completions)
          .as("the server's record of each step's completion, a child of the step's span")
          .isNotEmpty()
          .allSatisfy(
              c -> {
                assertThat(c.service()).isEqualTo(SERVER_SERVICE);
                assertThat(stepIds).contains(c.parentSpanId());
              });

      assertThat(
              spans.stream()
                  .filter(s -> Long.valueOf(run).equals(s.attribute("run_id")))
                  .filter(s -> !s.name().equals("workflow.signal"))
                  .map(ReceivedSpan::traceId)
                  .distinct())
          .as("the run's spans, on both sides, are one trace")
          .containsExactly(runSpan.traceId());
      assertThat(
              spans.stream()
                  .filter(s -> s.traceId().equals(runSpan.traceId()))
                  .map(ReceivedSpan::service)
                  .distinct())
          .containsExactlyInAnyOrder(SERVER_SERVICE, WORKER_SERVICE);

      List<ReceivedSpan> signals = named(spans, "workflow.signal", run);
      assertThat(signals).hasSize(1);
      ReceivedSpan signal = signals.get(0);
      assertThat(signal.service()).isEqualTo(SERVER_SERVICE);
      assertThat(signal.attributes())
          .containsEntry("workflow.name", ExportedWorkflow.NAME)
          .containsEntry("event", "approve")
          .containsEntry("outcome", "delivered")
          .containsEntry("delivered", true);
      ReceivedSpan signalRequest = byId.get(signal.parentSpanId());
      assertThat(signalRequest).as("the signal span's parent, its request's span").isNotNull();
      assertThat(signalRequest.name()).startsWith("POST /v1/workflows/{name}/runs/{runId}/");
      assertThat(signalRequest.traceId()).isEqualTo(signal.traceId());

      assertThat(receiver.metrics())
          .as("the worker's SDK exports metrics of its own, so metrics would show")
          .anySatisfy(m -> assertThat(m.service()).isEqualTo(WORKER_SERVICE))
          .allSatisfy(m -> assertThat(m.scope()).startsWith("io.opentelemetry"))
          .as("the server exports no metrics, although its variables ask for them")
          .noneMatch(m -> m.service().equals(SERVER_SERVICE));
      assertThat(receiver.refused()).as("requests the receiver refused").isEmpty();
    }
    assertThat(Thread.getAllStackTraces().keySet())
        .as("the receiver's thread ended")
        .noneMatch(t -> t.getName().equals(OtlpReceiver.threadName(receiverPort)));
    // Binding fails while anything still listens there.
    assertThatCode(
            () -> new ServerSocket(receiverPort, 0, InetAddress.getLoopbackAddress()).close())
        .as("the receiver's port was released")
        .doesNotThrowAnyException();
  }

  /** The standard variables that send a process's spans to {@code receiver} as {@code service}. */
  private static Map<String, String> otel(OtlpReceiver receiver, String service) {
    return Map.of(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        receiver.endpoint(),
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "http/protobuf",
        "OTEL_SERVICE_NAME",
        service,
        "OTEL_BSP_SCHEDULE_DELAY",
        "100");
  }

  /** The spans called {@code name} of run {@code run}. */
  private static List<ReceivedSpan> named(List<ReceivedSpan> spans, String name, long run) {
    return spans.stream()
        .filter(s -> s.name().equals(name) && Long.valueOf(run).equals(s.attribute("run_id")))
        .toList();
  }
}
