package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Concurrency strategies, limits read from the input and a throttle, set by a worker JVM from its
 * definitions and seen from its side: which runs' steps ran, how many at once, and when.
 */
class ConcurrencyStrategiesTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  private static StartOptions key(String key) {
    return StartOptions.builder().concurrencyKey(key).build();
  }

  private static List<String> lines(Path log, String workflow) throws IOException {
    if (!Files.exists(log)) {
      return List.of();
    }
    return Files.readAllLines(log).stream().filter(l -> l.startsWith(workflow + " ")).toList();
  }

  private static void awaitLine(Path log, String line) {
    Awaitility.await()
        .atMost(60, TimeUnit.SECONDS)
        .until(() -> lines(log, line.split(" ")[0]).contains(line));
  }

  /** The most runs of a plan whose step ran at once, by the begin and end lines of the log. */
  private static Map<String, Integer> mostAtOnce(List<String> lines) {
    Map<String, Integer> now = new HashMap<>();
    Map<String, Integer> most = new HashMap<>();
    for (String l : lines) {
      String[] p = l.split(" ");
      String plan = p[2].substring(0, p[2].indexOf('-'));
      int n = now.merge(plan, p[1].equals("begin") ? 1 : -1, Integer::sum);
      most.merge(plan, n, Math::max);
    }
    return most;
  }

  @Test
  void strategiesAndInputLimitsHoldAsTheWorkerSeesThem(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("executions.log");
    try (TestServer server = TestServer.start()) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      Process worker =
          WorkerJvm.start(
              KeyedStrategyWorkflows.class,
              dir.resolve("worker.out"),
              server.url(),
              log.toString());
      try {
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(
                () ->
                    List.of("latest-wins", "singleton", "by-plan").stream()
                        .allMatch(w -> client.workflows().concurrency(w).isPresent()));
        assertThat(client.workflows().concurrency("latest-wins"))
            .contains(Concurrency.limit(1).strategy(ConcurrencyStrategy.CANCEL_IN_PROGRESS));

        // cancel_in_progress: the new run cancels the one the worker is running.
        Started a = client.start("latest-wins", Map.of("id", "a"), key("k"));
        awaitLine(log, "latest-wins begin a");
        Started b = client.start("latest-wins", Map.of("id", "b"), key("k"));
        assertThat(b.admission()).isEqualTo(Admission.STARTED);
        assertThat(b.cancelledRuns()).containsExactly(a.runId());
        assertThat(client.runs().get("latest-wins", a.runId()).status())
            .isEqualTo(RunStatus.CANCELLED);
        awaitLine(log, "latest-wins begin b");
        client.signal("latest-wins", b.runId(), "go", Map.of());
        assertThat(client.runs().awaitResult("latest-wins", b.runId(), String.class, WAIT))
            .isEqualTo("b");
        assertThat(lines(log, "latest-wins"))
            .containsExactly("latest-wins begin a", "latest-wins begin b", "latest-wins end b");

        // skip: a start while the key's run runs makes nothing and names that run.
        Started s1 = client.start("singleton", Map.of("id", "1"), key("k"));
        assertThat(s1.admission()).isEqualTo(Admission.STARTED);
        awaitLine(log, "singleton begin 1");
        Started s2 = client.start("singleton", Map.of("id", "2"), key("k"));
        assertThat(s2.admission()).isEqualTo(Admission.SKIPPED);
        assertThat(s2.runId()).isEqualTo(s1.runId());
        assertThat(s2.created()).isFalse();
        client.signal("singleton", s1.runId(), "go", Map.of());
        assertThat(client.runs().awaitResult("singleton", s1.runId(), String.class, WAIT))
            .isEqualTo("1");
        Started s3 = client.start("singleton", Map.of("id", "3"), key("k"));
        assertThat(s3.admission()).isEqualTo(Admission.STARTED);
        assertThat(s3.created()).isTrue();
        awaitLine(log, "singleton begin 3");
        client.signal("singleton", s3.runId(), "go", Map.of());
        client.runs().awaitResult("singleton", s3.runId(), String.class, WAIT);
        assertThat(lines(log, "singleton"))
            .containsExactly(
                "singleton begin 1", "singleton end 1", "singleton begin 3", "singleton end 3");

        // limitFrom: a premium key runs two at once, a free key one.
        List<Started> plans = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
          plans.add(client.start("by-plan", Map.of("plan", "premium", "id", i), key("acme")));
        }
        for (int i = 1; i <= 3; i++) {
          plans.add(client.start("by-plan", Map.of("plan", "free", "id", i), key("solo")));
        }
        assertThat(plans)
            .extracting(Started::admission)
            .containsExactly(
                Admission.STARTED,
                Admission.STARTED,
                Admission.QUEUED,
                Admission.QUEUED,
                Admission.STARTED,
                Admission.QUEUED,
                Admission.QUEUED);
        for (Started s : plans) {
          client.runs().awaitResult("by-plan", s.runId(), String.class, WAIT);
        }
        assertThat(mostAtOnce(lines(log, "by-plan")))
            .containsEntry("premium", 2)
            .containsEntry("free", 1);

        // A start whose input lacks the path the limit reads is refused and makes nothing.
        assertThatThrownBy(() -> client.start("by-plan", Map.of("id", 9), key("acme")))
            .isInstanceOf(ApiException.class)
            .hasMessageContaining("input has no value at $.plan");
        assertThat(client.runs().list("by-plan", null, null, 100).runs()).hasSize(plans.size());

        // A throttle: two starts at once, then one each 200 ms, queued rather than refused.
        assertThat(client.workflows().throttle("paced"))
            .contains(Throttle.of(5, Duration.ofSeconds(1)).burst(2));
        List<Started> paced = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
          paced.add(client.start("paced", Map.of("id", i)));
        }
        assertThat(client.runs().blockers("paced", paced.get(5).runId()))
            .extracting(Blocker::kind)
            .contains("throttled");
        for (Started s : paced) {
          client.runs().awaitResult("paced", s.runId(), String.class, WAIT);
        }
        List<Long> began =
            lines(log, "paced").stream()
                .map(l -> Long.parseLong(l.split(" ")[2]))
                .sorted()
                .toList();
        assertThat(began).hasSize(6);
        assertThat(began.get(5) - began.get(0))
            .as("six starts at 5/s, two at once")
            .isBetween(700L, 3000L);
      } finally {
        worker.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}
