package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A parent's worker JVM SIGKILLed after the parent started its child and while a signal waits in
 * its inbox: another worker finishes the parent with the same child (started once, run once) and
 * the buffered signal.
 */
class ComposedWorkerCrashTest {

  @Test
  void aParentKilledAfterStartingItsChildFinishesWithTheSameChildAndTheBufferedSignal(
      @TempDir Path dir) throws Exception {
    Path log = dir.resolve("executions.log");
    try (TestServer server = TestServer.start()) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      Process worker =
          WorkerJvm.start(
              ComposedCrashWorkflow.class, dir.resolve("worker.out"), server.url(), log.toString());
      try {
        Started s = client.start("crash-parent", "p");
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> Files.exists(log) && Files.readAllLines(log).contains("between"));
        assertThat(client.signal("crash-parent", s.runId(), "go", "signal-1").buffered()).isTrue();
        worker.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL inside "between"

        List<Worker> survivors =
            List.of(
                ComposedCrashWorkflow.parent(log, false)
                    .serve(WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1))),
                ComposedCrashWorkflow.child(log)
                    .serve(WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1))));
        try {
          assertThat(
                  client
                      .runs()
                      .awaitResult("crash-parent", s.runId(), String.class, Duration.ofSeconds(60)))
              .isEqualTo("k+signal-1");
        } finally {
          for (Worker w : survivors) {
            w.close();
          }
        }
        RunInfo parent = client.runs().get("crash-parent", s.runId());
        assertThat(parent.children()).hasSize(1);
        assertThat(Files.readAllLines(log)).containsExactlyInAnyOrder("between", "between", "kid");
        assertThat(client.runs().signals("crash-parent", s.runId()))
            .extracting(SignalInfo::event, SignalInfo::deliveredTo)
            .contains(org.assertj.core.groups.Tuple.tuple("go", "go"));
      } finally {
        worker.destroyForcibly();
      }
    }
  }
}
