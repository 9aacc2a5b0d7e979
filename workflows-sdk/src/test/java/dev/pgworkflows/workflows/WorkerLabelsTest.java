package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Worker JVMs with labels on one server: a workflow's required labels, a step's labels and a sticky
 * run, seen from the workers' side (each step answers the worker that ran it); a sticky run moves
 * when its worker is SIGKILLed, with one journal row per step.
 */
class WorkerLabelsTest {
  private static final Duration WAIT = Duration.ofSeconds(90);

  private static List<String> ranOn(WorkflowClient client, String workflow, long run) {
    return client.runs().steps(workflow, run).stream()
        .filter(s -> s.kind().equals("run"))
        .map(s -> s.name() + "@" + s.output().asText())
        .toList();
  }

  @Test
  void requiredAndStepLabelsSendWorkToTheWorkersThatHaveThem(@TempDir Path dir) throws Exception {
    try (TestServer server = TestServer.start(Map.of("WORKFLOWS_WORKER_EXPIRY_MS", "3000"))) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      Process cpu =
          WorkerJvm.start(LabelledWorkflows.class, dir.resolve("cpu.out"), server.url(), "cpu");
      Process gpu =
          WorkerJvm.start(
              LabelledWorkflows.class,
              dir.resolve("gpu.out"),
              server.url(),
              "gpu",
              "gpu=true,region=eu");
      try {
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> client.workers("pipeline").size() == 2);
        assertThat(client.workflows().routing("render"))
            .contains(Routing.workers().require("gpu", "true"));
        assertThat(client.workers("pipeline"))
            .extracting(WorkerInfo::labels)
            .containsExactlyInAnyOrder(Map.of(), Map.of("gpu", "true", "region", "eu"));

        for (int i = 0; i < 6; i++) {
          Started r = client.start("render", i);
          assertThat(client.runs().awaitResult("render", r.runId(), String.class, WAIT))
              .isEqualTo("gpu");
        }
        for (int i = 0; i < 6; i++) {
          Started p = client.start("pipeline", i);
          String ran = client.runs().awaitResult("pipeline", p.runId(), String.class, WAIT);
          assertThat(ran.split(",")[1]).as(ran).isEqualTo("gpu");
          assertThat(ranOn(client, "pipeline", p.runId())).hasSize(3);
        }

        // With the GPU worker gone, a render run waits, and its blockers say for what.
        gpu.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> client.workers("render").stream().allMatch(w -> w.labels().isEmpty()));
        Started waiting = client.start("render", 99);
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .untilAsserted(
                () ->
                    assertThat(client.runs().blockers("render", waiting.runId()))
                        .extracting(Blocker::kind)
                        .contains("no_worker_with_labels"));
        assertThat(client.runs().get("render", waiting.runId()).status())
            .isEqualTo(RunStatus.RUNNING);
        assertThat(client.runs().steps("render", waiting.runId())).isEmpty();
      } finally {
        cpu.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        gpu.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void aStickyRunStaysWithItsWorkerAndMovesWhenThatWorkerIsKilled(@TempDir Path dir)
      throws Exception {
    try (TestServer server = TestServer.start(Map.of("WORKFLOWS_WORKER_EXPIRY_MS", "3000"))) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      Map<String, Process> workers = new HashMap<>();
      for (String name : List.of("a", "b")) {
        workers.put(
            name,
            WorkerJvm.start(
                LabelledWorkflows.class, dir.resolve(name + ".out"), server.url(), name));
      }
      try {
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> client.workers("cached").size() == 2);
        Started run = client.start("cached", 1);
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> ranOn(client, "cached", run.runId()).size() >= 3);
        List<String> before = ranOn(client, "cached", run.runId());
        String first = before.get(0).substring(before.get(0).indexOf('@') + 1);
        assertThat(before).allSatisfy(s -> assertThat(s).endsWith("@" + first));

        workers.get(first).destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        String other = first.equals("a") ? "b" : "a";
        String result = client.runs().awaitResult("cached", run.runId(), String.class, WAIT);
        List<String> all = ranOn(client, "cached", run.runId());
        assertThat(all)
            .extracting(s -> s.substring(0, s.indexOf('@')))
            .containsExactly("s1", "s2", "s3", "s4", "s5", "s6");
        assertThat(all.get(5)).isEqualTo("s6@" + other);
        // Once moved, it stays: no step after the first on the other worker went back.
        int moved =
            all.indexOf(all.stream().filter(s -> s.endsWith("@" + other)).findFirst().get());
        assertThat(all.subList(0, moved)).allSatisfy(s -> assertThat(s).endsWith("@" + first));
        assertThat(all.subList(moved, 6)).allSatisfy(s -> assertThat(s).endsWith("@" + other));
        assertThat(result)
            .isEqualTo(
                String.join(",", all.stream().map(s -> s.substring(s.indexOf('@') + 1)).toList())
                    + ",");
      } finally {
        for (Process p : workers.values()) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      }
    }
  }

  @Test
  void badLabelsAreRefusedBeforeAnythingIsSent() {
    assertThatThrownBy(() -> WorkerOptions.url("http://localhost:1").labels(Map.of("GPU", "x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("labels has a label name \"GPU\"");
    assertThatThrownBy(() -> Routing.workers().require("gpu", "a b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("require.gpu must be a string");
  }
}
