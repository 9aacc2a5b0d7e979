package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.CrashyWorkflow;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.WorkflowClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A worker JVM halted after a step returned but before its completion was sent, and right after the
 * completion committed: for step "two", whose completion goes out before "three" begins, and for
 * the last step "three", whose completion goes out with the run's result. Another worker finishes
 * the run; every step is journaled once; the step runs again only in the first case; no other step
 * runs again.
 */
@Tag("reliability")
class CrashPointsTest {

  @ParameterizedTest
  @CsvSource({
    "after-step, two, 'one,two,two,three'",
    "after-commit, two, 'one,two,three'",
    "after-step, three, 'one,two,three,three'",
    "after-commit, three, 'one,two,three'"
  })
  void aWorkerHaltedAroundACompletionLosesNothing(
      String point, String step, String expected, @TempDir Path dir) throws Exception {
    Path log = dir.resolve("executions.log");
    try (TestServer server = TestServer.start()) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      long run = client.start("crashy", "go").runId();
      Process child =
          ChildJvm.start(
              List.of("-D" + CrashyWorkflow.CRASH_AT + "=" + point + ":" + step),
              CrashyWorkflow.class,
              dir.resolve("child.out"),
              Map.of(),
              server.url(),
              log.toString(),
              "nohang");
      assertThat(child.waitFor()).as("the child halts itself").isEqualTo(137);
      Worker survivor =
          CrashyWorkflow.define(log, false)
              .serve(WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)));
      try {
        assertThat(client.runs().awaitResult("crashy", run, String.class, Duration.ofSeconds(60)))
            .isEqualTo("o2t");
      } finally {
        survivor.close();
      }
      assertThat(String.join(",", java.nio.file.Files.readAllLines(log))).isEqualTo(expected);
      assertThat(client.runs().steps("crashy", run))
          .extracting(StepInfo::name)
          .containsExactly("one", "two", "three");
    }
  }
}
