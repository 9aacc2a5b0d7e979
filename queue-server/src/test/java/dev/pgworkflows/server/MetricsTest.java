package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code /metrics}: the design's workflow metrics, the queues', HTTP, JVM and pool metrics, each of
 * ours with help text and a type, and an exposition promtool lints clean; runs in flight within a
 * second.
 */
class MetricsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  /** The metric names this server defines; JVM and pool metrics come from their binders. */
  private static final List<String> OURS = List.of("workflow_", "queue_", "http_server_requests");

  private static long measured;

  /** Every metric of ours gets a sample: a run retried, completed and ended, a signal, a queue. */
  @BeforeAll
  static void exerciseEveryMetric() {
    measured =
        api.post("/v1/workflows/measured/runs", Map.of("input", 1)).json().get("runId").asLong();
    JsonNode task = server.worker("measured").pollOne();
    Api.Response retried =
        api.post(
            "/v1/workflows/measured/runs/" + measured + "/retry",
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
    task = server.worker("measured").pollOne();
    Api.Response done =
        server
            .worker("measured")
            .complete(
                task,
                Map.of(
                    "step",
                    Map.of("name", "charge", "kind", "run", "output", 1),
                    "stepSeconds",
                    0.25,
                    "result",
                    Map.of("status", "completed", "output", 2)));
    assertThat(done.status()).as(done.body()).isEqualTo(200);

    WorkerClient waiter = server.worker("signalled");
    long run = waiter.start(Map.of());
    Api.Response waiting =
        waiter.complete(
            waiter.pollOne(),
            Map.of(
                "next",
                Map.of("delayMs", 600_000, "wait", Map.of("step", "approve", "event", "approve"))));
    assertThat(waiting.status()).as(waiting.body()).isEqualTo(200);
    Api.Response signal =
        api.post("/v1/workflows/signalled/runs/" + run + "/signals/approve", Map.of());
    assertThat(signal.json().get("delivered").asBoolean()).as(signal.body()).isTrue();

    WorkerClient updated = server.worker("updated");
    long cart = updated.start(Map.of());
    updated.complete(updated.pollOne(), Map.of("next", Map.of("delayMs", 600_000)));
    api.post("/v1/workflows/updated/runs/" + cart + "/updates/addItem", Map.of());
    Api.Response answered = updated.answerUpdate(updated.pollOne(), Map.of("status", "completed"));
    assertThat(answered.json().get("outcome").asText()).as(answered.body()).isEqualTo("ok");

    api.put("/v1/queues/visible", null);
    api.post("/v1/queues/visible/messages", Map.of("body", 1));
  }

  private static String scrape() {
    Api.Response r = api.withToken(null).get("/metrics");
    assertThat(r.status()).isEqualTo(200);
    return r.body();
  }

  @Test
  void workflowQueueHttpJvmAndPoolMetricsAreExposed() {
    String text = scrape();
    assertThat(text)
        .contains("workflow_runs_started_total{workflow=\"measured\"} 1.0")
        .contains("workflow_runs_completed_total{status=\"completed\",workflow=\"measured\"} 1.0")
        .contains("workflow_run_duration_seconds_count{workflow=\"measured\"} 1")
        .contains("workflow_step_duration_seconds_count{step=\"charge\",workflow=\"measured\"} 1")
        .contains("workflow_step_retries_total{step=\"charge\",workflow=\"measured\"} 1.0")
        .contains("workflow_signals_total{event=\"approve\",workflow=\"signalled\"} 1.0")
        .contains(
            "workflow_updates_total{outcome=\"completed\",update=\"addItem\",workflow=\"updated\"} 1.0")
        .contains("workflow_retention_swept_total")
        .contains("workflow_runs_in_flight{workflow=\"measured\"} 0.0")
        .contains("workflow_runs_in_flight{workflow=\"signalled\"} 1.0")
        .contains("queue_depth{queue=\"visible\"} 1.0")
        .contains("queue_in_flight{queue=\"visible\"}")
        .contains("queue_oldest_age_seconds{queue=\"visible\"}")
        .contains("queue_dead_lettered{queue=\"visible\"} 0.0")
        .contains("queue_waiting_polls")
        .contains(
            "http_server_requests_seconds_count{method=\"POST\",route=\"/v1/workflows/{name}/runs\",status=\"201\"}")
        .contains("jvm_memory_used_bytes")
        .contains("hikaricp_connections");
    // No label value may be a run id or a raw path.
    assertThat(text)
        .doesNotContain("run_id")
        .doesNotContain("/v1/workflows/measured/runs/" + measured);
    for (String line : text.split("\n")) {
      if (!line.startsWith("#") && !line.isBlank()) {
        assertThat(line).matches("[a-zA-Z_:][a-zA-Z0-9_:]*(\\{.*\\})? [-+0-9.eE]+|.*(NaN|Inf).*");
      }
    }
  }

  /**
   * Every family of ours has help text and a type, and {@code promtool check metrics} (Debian
   * package prometheus; .ci/run installs it) exits 0 on the whole exposition, the JVM binders'
   * families included, with nothing to say. Without promtool (a developer's machine) the built-in
   * check stands alone and the test says so; in CI promtool must be there.
   */
  @Test
  void everyMetricOfOursHasHelpTextAndPromtoolFindsNoProblemWithIt() throws Exception {
    String text = scrape();
    Map<String, String> help = new LinkedHashMap<>();
    Map<String, String> type = new LinkedHashMap<>();
    List<String> samples = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.startsWith("# HELP ")) {
        String[] p = line.substring(7).split(" ", 2);
        help.put(p[0], p.length > 1 ? p[1].strip() : "");
      } else if (line.startsWith("# TYPE ")) {
        String[] p = line.substring(7).split(" ", 2);
        type.put(p[0], p[1]);
      } else if (!line.startsWith("#") && !line.isBlank()) {
        samples.add(line.split("[{ ]", 2)[0]);
      }
    }
    List<String> families = help.keySet().stream().filter(MetricsTest::ours).toList();
    assertThat(families)
        .contains(
            "workflow_runs_started_total",
            "workflow_runs_completed_total",
            "workflow_runs_in_flight",
            "workflow_run_duration_seconds",
            "workflow_step_duration_seconds",
            "workflow_step_retries_total",
            "workflow_signals_total",
            "workflow_updates_total",
            "workflow_retention_swept_total",
            "queue_depth",
            "http_server_requests_seconds");
    for (String family : families) {
      assertThat(help.get(family)).as("help text of %s", family).isNotBlank();
      assertThat(type).as("type of %s", family).containsKey(family);
    }
    for (String sample : samples) {
      if (ours(sample)) {
        assertThat(
                type.keySet().stream()
                    .anyMatch(
                        f ->
                            sample.equals(f)
                                || sample.matches(
                                    java.util.regex.Pattern.quote(f)
                                        + "_(count|sum|bucket|max|total|created)")))
            .as("a family declares sample %s", sample)
            .isTrue();
      }
    }

    String promtool = onPath("promtool");
    if (promtool == null) {
      assertThat(System.getenv("CI"))
          .as("CI installs promtool (.ci/run): it must not be skipped there")
          .isNotEqualTo("true");
      System.out.println(
          "MetricsTest: promtool is not installed (Debian package prometheus); checked only that"
              + " every metric family of ours has help text and a type");
      return;
    }
    Process p = new ProcessBuilder(promtool, "check", "metrics").redirectErrorStream(true).start();
    p.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    // Exit 3 is lint problems, 1 an exposition it could not read at all.
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out.lines().filter(l -> !l.isBlank())).as("promtool:\n%s", out).isEmpty();
    assertThat(text).contains("system_cpus ").doesNotContain("process_cpu_time_ns_total");
    System.out.println("MetricsTest: promtool check metrics exits 0 and says nothing");
  }

  /**
   * A start shows in {@code workflow_runs_in_flight} within a second, whichever scrape came just
   * before it: the gauge is read from the database when it is over a second old.
   */
  @Test
  void aStartShowsInRunsInFlightWithinASecond() throws Exception {
    assertThat(scrape()).doesNotContain("workflow_runs_in_flight{workflow=\"fresh\"}");
    server.worker("fresh").start(1);
    long started = System.nanoTime();
    String text = scrape();
    long remaining = 1_000 - (System.nanoTime() - started) / 1_000_000;
    if (!text.contains("workflow_runs_in_flight{workflow=\"fresh\"} 1.0")) {
      Thread.sleep(Math.max(0, remaining));
      text = scrape();
    }
    assertThat(text).contains("workflow_runs_in_flight{workflow=\"fresh\"} 1.0");
  }

  private static boolean ours(String name) {
    return OURS.stream().anyMatch(name::startsWith);
  }

  private static String onPath(String program) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return Path.of(dir, program).toString();
      }
    }
    return null;
  }
}
