package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker JVM killed inside an update's handler: the update stays pending, another worker answers
 * it, and the run journals it once, its state changed once.
 */
class UpdateWorkerCrashTest {

  @Test
  void anotherWorkerAnswersAnUpdateWhoseWorkerWasKilledInItsHandler(@TempDir Path dir)
      throws Exception {
    Path log = dir.resolve("executions.log");
    try (TestServer server = TestServer.start()) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      Process child =
          WorkerJvm.start(
              HangingUpdateWorkflow.class, dir.resolve("child.out"), server.url(), log.toString());
      try {
        long run = client.start("hanging-update", "go").runId();
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> client.runs().get("hanging-update", run).waitingFor() != null);
        CompletableFuture<Integer> answer =
            client.updateAsync(
                "hanging-update",
                run,
                "add",
                5,
                Integer.class,
                UpdateOptions.builder().timeout(Duration.ofSeconds(90)).build());
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> Files.exists(log) && Files.readAllLines(log).contains("add"));
        child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL inside the handler
        assertThat(answer).isNotDone();

        Worker survivor =
            HangingUpdateWorkflow.define(log, false)
                .serve(WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)));
        try {
          assertThat(answer.get(60, TimeUnit.SECONDS)).isEqualTo(5);
          client.signal("hanging-update", run, "done", java.util.Map.of("at", "now"));
          assertThat(
                  client
                      .runs()
                      .awaitResult("hanging-update", run, Integer.class, Duration.ofSeconds(60)))
              .as("the state changed once")
              .isEqualTo(5);
        } finally {
          survivor.close();
        }
        assertThat(Files.readAllLines(log))
            .as("the killed handler and the one that answered")
            .containsExactly("add", "add");
        assertThat(client.runs().steps("hanging-update", run))
            .extracting(StepInfo::name)
            .filteredOn(n -> n.startsWith("__update."))
            .hasSize(1);
      } finally {
        child.destroyForcibly();
      }
    }
  }
}
