package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class MetricsTest {

  @Test
  void workflowQueueHttpJvmAndPoolMetricsAreExposed() throws Exception {
    try (TestServer server = TestServer.start()) {
      Api api = server.api();
      long run =
          api.post("/v1/workflows/measured/runs", Map.of("input", 1)).json().get("runId").asLong();
      JsonNode task =
          api.post(
                  "/v1/workflows/measured/tasks/poll",
                  Map.of("versions", List.of(1), "waitSeconds", 5))
              .json()
              .get("tasks")
              .get(0);
      Api.Response retried =
          api.post(
              "/v1/workflows/measured/runs/" + run + "/retry",
              Map.of(
                  "messageId",
                  task.get("messageId").asLong(),
                  "receipt",
                  task.get("receipt").asText(),
                  "delayMs",
                  0,
                  "step",
                  "charge"));
      assertThat(retried.json().get("outcome").asText()).isEqualTo("ok");
      task =
          api.post(
                  "/v1/workflows/measured/tasks/poll",
                  Map.of("versions", List.of(1), "waitSeconds", 5))
              .json()
              .get("tasks")
              .get(0);
      api.post(
          "/v1/workflows/measured/runs/" + run + "/complete",
          Map.of(
              "messageId", task.get("messageId").asLong(),
              "receipt", task.get("receipt").asText(),
              "step", Map.of("name", "charge", "kind", "run", "output", 1),
              "stepSeconds", 0.25,
              "result", Map.of("status", "completed", "output", 2)));
      api.put("/v1/queues/visible", null);
      api.post("/v1/queues/visible/messages", Map.of("body", 1));

      Api.Response scrape = api.withToken(null).get("/metrics");
      assertThat(scrape.status()).isEqualTo(200);
      String text = scrape.body();
      assertThat(text)
          .contains("workflow_runs_started_total{workflow=\"measured\"} 1.0")
          .contains("workflow_runs_completed_total{status=\"completed\",workflow=\"measured\"} 1.0")
          .contains("workflow_run_duration_seconds_count{workflow=\"measured\"} 1")
          .contains("workflow_step_duration_seconds_count{step=\"charge\",workflow=\"measured\"} 1")
          .contains("workflow_step_retries_total{step=\"charge\",workflow=\"measured\"} 1.0")
          .contains("workflow_retention_swept_total")
          .contains("workflow_runs_in_flight{workflow=\"measured\"} 0.0")
          .contains("queue_depth{queue=\"visible\"} 1.0")
          .contains("queue_in_flight{queue=\"visible\"}")
          .contains("queue_oldest_age_seconds{queue=\"visible\"}")
          .contains("queue_dead_lettered{queue=\"visible\"} 0.0")
          .contains(
              "http_server_requests_seconds_count{method=\"POST\",route=\"/v1/workflows/{name}/runs\",status=\"201\"}")
          .contains("jvm_memory_used_bytes")
          .contains("hikaricp_connections");
      // No label value may be a run id or a raw path.
      assertThat(text)
          .doesNotContain("run_id")
          .doesNotContain("/v1/workflows/measured/runs/" + run);
      for (String line : text.split("\n")) {
        if (!line.startsWith("#") && !line.isBlank()) {
          assertThat(line).matches("[a-zA-Z_:][a-zA-Z0-9_:]*(\\{.*\\})? [-+0-9.eE]+|.*(NaN|Inf).*");
        }
      }
      promtoolCheck(text);
    }
  }

  /** Runs {@code promtool check metrics} when promtool is installed (Debian package prometheus). */
  private static void promtoolCheck(String text) throws Exception {
    String promtool = null;
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, "promtool"))) {
        promtool = Path.of(dir, "promtool").toString();
      }
    }
    if (promtool == null) {
      System.out.println("promtool not installed; skipped its check of the exposition");
      return;
    }
    Process p = new ProcessBuilder(promtool, "check", "metrics").redirectErrorStream(true).start();
    p.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    // promtool exits 3 for lint warnings (e.g. counters without _total from the JVM binders),
    // 1 for errors in the format itself.
    assertThat(p.exitValue()).as(out).isNotEqualTo(1);
  }
}
