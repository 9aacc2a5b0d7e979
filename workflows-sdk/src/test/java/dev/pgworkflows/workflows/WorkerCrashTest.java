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

/** A worker JVM killed mid-step; another worker finishes the run with each step journaled once. */
class WorkerCrashTest {

  @Test
  void anotherWorkerFinishesARunWhoseWorkerWasKilledMidStep(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("executions.log");
    try (TestServer server = TestServer.start()) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      Process child =
          WorkerJvm.start(
              CrashyWorkflow.class, dir.resolve("child.out"), server.url(), log.toString());
      try {
        Started s = client.start("crashy", "go");
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> Files.exists(log) && Files.readAllLines(log).contains("two"));
        child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL mid-step
        assertThat(client.runs().get("crashy", s.runId()).status()).isEqualTo(RunStatus.RUNNING);

        Worker survivor =
            CrashyWorkflow.define(log, false)
                .serve(WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)));
        try {
          String result =
              client.runs().awaitResult("crashy", s.runId(), String.class, Duration.ofSeconds(60));
          assertThat(result).isEqualTo("o2t");
        } finally {
          survivor.close();
        }
        List<String> executions = Files.readAllLines(log);
        // "one" was journaled before the crash and is not run again; "two" ran twice (the
        // killed attempt and the retry); "three" once.
        assertThat(executions).containsExactly("one", "two", "two", "three");
        assertThat(client.runs().steps("crashy", s.runId()))
            .extracting(StepInfo::name)
            .containsExactly("one", "two", "three");
      } finally {
        child.destroyForcibly();
      }
    }
  }
}
