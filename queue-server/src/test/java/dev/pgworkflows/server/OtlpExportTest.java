package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.OtlpReceiver;
import dev.pgworkflows.testing.TestDatabase;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server configured with the standard {@code OTEL_*} variables exports its spans over OTLP/HTTP
 * to a real receiver, exports those it still holds when it closes, and leaves no exporter thread
 * behind.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OtlpExportTest {

  @Test
  void spansStillHeldWhenTheServerClosesReachTheReceiver() {
    try (OtlpReceiver receiver = OtlpReceiver.start()) {
      // Longer than the test: what arrives was exported when the server closed.
      QueueServer server = server(receiver, "600000");
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
                assertThat(s.service()).isEqualTo("otlp-export-test");
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
      try (QueueServer server = server(receiver, "100")) {
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
    try (ServerSocket again = new ServerSocket(receiverPort, 0, InetAddress.getLoopbackAddress())) {
      assertThat(again.getLocalPort()).as("the receiver's port is free").isEqualTo(receiverPort);
    }
  }

  /**
   * A server on a fresh database exporting to {@code receiver}, configured as an operator would.
   */
  private static QueueServer server(OtlpReceiver receiver, String scheduleDelayMs) {
    Map<String, String> env =
        Map.of(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            receiver.endpoint(),
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "http/protobuf",
            "OTEL_SERVICE_NAME",
            "otlp-export-test",
            "OTEL_BSP_SCHEDULE_DELAY",
            scheduleDelayMs);
    TestDatabase db = TestDatabase.fresh();
    ServerConfig config =
        ServerConfig.from(Map.of("WORKFLOWS_PORT", "0", "WORKFLOWS_DB_POOL_SIZE", "4"))
            .withDatabase(db.jdbcUrl(), db.user(), db.password());
    return QueueServer.builder(config).environment(env).start();
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
