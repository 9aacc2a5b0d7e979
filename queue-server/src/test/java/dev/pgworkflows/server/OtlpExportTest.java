package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.pgworkflows.server.testing.OtlpReceiver;
import dev.pgworkflows.testing.TestDatabase;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A server configured with the standard {@code OTEL_*} variables exports its spans over OTLP/HTTP
 * (its default protocol) to a real receiver, exports those it still holds when it closes, never
 * exports metrics, and leaves no exporter thread behind; its settings win over the process's; a
 * server given none exports nothing and starts no exporter, whatever the process's settings.
 */
class OtlpExportTest {
  private static final String SERVICE = "otlp-export-test";

  @Test
  void spansStillHeldWhenTheServerClosesReachTheReceiver() {
    try (OtlpReceiver receiver = OtlpReceiver.start()) {
      // Longer than the test: what arrives was exported when the server closed. No protocol is
      // set: the receiver speaks only OTLP/HTTP, the server's default.
      QueueServer server = server(receiver, "600000", Map.of());
      try {
        Api api = new Api("http://localhost:" + server.port(), TestServer.TOKEN);
        assertThat(api.get("/v1/workflows").status()).isEqualTo(200);
        assertThat(receiver.spans()).as("nothing exported before the batch is due").isEmpty();
      } finally {
        server.close();
      }
      assertThat(receiver.spans())
          .as("the request's span, exported at close")
          .anySatisfy(
              s -> {
                assertThat(s.name()).isEqualTo("GET /v1/workflows");
                assertThat(s.service()).isEqualTo(SERVICE);
                assertThat(s.attribute("http.route")).isEqualTo("/v1/workflows");
                assertThat(s.attribute("http.response.status_code")).isEqualTo(200L);
              });
      assertThat(receiver.metrics()).as("the server exports no metrics over OTLP").isEmpty();
      assertThat(receiver.refused()).isEmpty();
    }
  }

  @Test
  void neitherTheExporterNorTheReceiverLeavesAThreadOrAPortBehind() throws Exception {
    Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
    int receiverPort;
    try (OtlpReceiver receiver = OtlpReceiver.start()) {
      receiverPort = receiver.port();
      try (QueueServer server = server(receiver, "100", Map.of())) {
        Api api = new Api("http://localhost:" + server.port(), TestServer.TOKEN);
        assertThat(api.get("/v1/workflows").status()).isEqualTo(200);
        Awaitility.await()
            .atMost(10, TimeUnit.SECONDS)
            .until(
                () ->
                    receiver.spans().stream().anyMatch(s -> s.name().equals("GET /v1/workflows")));
        assertThat(exporterThreads(before))
            .as("the exporter's threads, while it runs")
            .isNotEmpty();
      }
      // The span processor's thread ends at its next wake-up, within the schedule delay.
      Awaitility.await()
          .atMost(5, TimeUnit.SECONDS)
          .untilAsserted(
              () ->
                  assertThat(exporterThreads(before))
                      .as("exporter threads alive after the server closed")
                      .isEmpty());
    }
    assertThat(Thread.getAllStackTraces().keySet())
        .noneMatch(t -> t.getName().equals(OtlpReceiver.threadName(receiverPort)));
    // Binding fails while anything still listens there.
    assertThatCode(
            () -> new ServerSocket(receiverPort, 0, InetAddress.getLoopbackAddress()).close())
        .as("the receiver's port was released")
        .doesNotThrowAnyException();
  }

  @Test
  void theServersSettingsWinOverTheProcessesAndMetricsAreNeverExported() throws Exception {
    // The process says otherwise on every point, as a CI shell or a -D flag might.
    Map<String, String> processSays =
        Map.of(
            "otel.exporter.otlp.endpoint", "http://127.0.0.1:9",
            "otel.service.name", "the-process",
            "otel.metrics.exporter", "otlp",
            "otel.logs.exporter", "otlp");
    try (OtlpReceiver receiver = OtlpReceiver.start()) {
      processSays.forEach(System::setProperty);
      QueueServer server;
      try {
        server =
            server(
                receiver,
                "100",
                Map.of("OTEL_METRICS_EXPORTER", "otlp", "OTEL_METRIC_EXPORT_INTERVAL", "100"));
      } finally {
        processSays.keySet().forEach(System::clearProperty);
      }
      try {
        Api api = new Api("http://localhost:" + server.port(), TestServer.TOKEN);
        assertThat(api.get("/v1/workflows").status()).isEqualTo(200);
        Awaitility.await()
            .atMost(10, TimeUnit.SECONDS)
            .until(
                () ->
                    receiver.spans().stream().anyMatch(s -> s.name().equals("GET /v1/workflows")));
        // Ten metric export intervals: a metrics exporter, had one started, would have sent.
        Thread.sleep(1_000);
      } finally {
        server.close();
      }
      assertThat(receiver.spans()).allSatisfy(s -> assertThat(s.service()).isEqualTo(SERVICE));
      assertThat(receiver.metrics()).as("metrics sent to the receiver").isEmpty();
      assertThat(receiver.refused()).isEmpty();
    }
  }

  @Test
  void aServerGivenNoSettingsExportsNothingAndStartsNoExporterWhateverTheProcessSays() {
    Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());
    try (OtlpReceiver receiver = OtlpReceiver.start()) {
      // The embedding application's own settings, which an embedded server does not read.
      Map<String, String> processSays =
          Map.of(
              "otel.exporter.otlp.endpoint", receiver.endpoint(),
              "otel.exporter.otlp.protocol", "http/protobuf",
              "otel.traces.exporter", "otlp",
              "otel.bsp.schedule.delay", "100");
      processSays.forEach(System::setProperty);
      List<QueueServer> servers = new ArrayList<>();
      try {
        servers.add(QueueServer.start(config()));
        // Blank endpoints are unset ones.
        servers.add(
            QueueServer.builder(config())
                .environment(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", " ", "OTLP_ENDPOINT", ""))
                .start());
      } finally {
        processSays.keySet().forEach(System::clearProperty);
      }
      try {
        for (QueueServer server : servers) {
          Api api = new Api("http://localhost:" + server.port(), TestServer.TOKEN);
          assertThat(api.get("/v1/workflows").status()).isEqualTo(200);
        }
        assertThat(exporterThreads(before))
            .as("exporter threads of servers not exporting")
            .isEmpty();
      } finally {
        servers.forEach(QueueServer::close);
      }
      assertThat(receiver.spans()).isEmpty();
      assertThat(receiver.metrics()).isEmpty();
    }
  }

  /**
   * A server on a fresh database exporting to {@code receiver}, configured as an operator would.
   */
  private static QueueServer server(
      OtlpReceiver receiver, String scheduleDelayMs, Map<String, String> more) {
    Map<String, String> env = new HashMap<>(more);
    env.put("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint());
    env.put("OTEL_SERVICE_NAME", SERVICE);
    env.put("OTEL_BSP_SCHEDULE_DELAY", scheduleDelayMs);
    return QueueServer.builder(config()).environment(env).start();
  }

  private static ServerConfig config() {
    TestDatabase db = TestDatabase.fresh();
    return ServerConfig.from(Map.of("WORKFLOWS_PORT", "0", "WORKFLOWS_DB_POOL_SIZE", "4"))
        .withDatabase(db.jdbcUrl(), db.user(), db.password());
  }

  /**
   * Threads started since {@code before} by the span processor or the OTLP sender's dispatcher,
   * still alive. OkHttp's "TaskRunner" threads are left out: a pool OkHttp shares across the JVM,
   * whose idle threads end on their own after a minute.
   */
  private static List<String> exporterThreads(Set<Thread> before) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> !before.contains(t) && t.isAlive())
        .map(Thread::getName)
        .filter(n -> n.startsWith("BatchSpanProcessor") || n.startsWith("okhttp-dispatch"))
        .toList();
  }
}
