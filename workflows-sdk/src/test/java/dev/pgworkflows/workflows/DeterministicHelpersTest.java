package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The body's time, UUIDs, random numbers and patch markers: journaled the first time, the same on
 * every replay, and a patch is taken only by runs that had not passed it.
 */
class DeterministicHelpersTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void timeUuidAndRandomNumbersAreTheSameAfterTheWorkerJvmIsKilledMidRun(@TempDir Path dir)
      throws Exception {
    Path log = dir.resolve("values.log");
    WorkflowClient client = server.client();
    Process child =
        WorkerJvm.start(
            ValuesWorkflow.class, dir.resolve("child.out"), server.url(), log.toString());
    try {
      Started s = client.start("values", "go");
      Awaitility.await()
          .atMost(60, TimeUnit.SECONDS)
          .until(() -> Files.exists(log) && !Files.readAllLines(log).isEmpty());
      child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL mid-step
      String before = Files.readAllLines(log).get(0);

      server.serve(ValuesWorkflow.define(log, false));
      String result =
          client.runs().awaitResult("values", s.runId(), String.class, Duration.ofSeconds(60));

      assertThat(result).isEqualTo(before);
      assertThat(Files.readAllLines(log)).containsExactly(before, before);
      assertThat(client.runs().steps("values", s.runId()))
          .extracting(StepInfo::name)
          .containsExactly("__now.1", "__uuid.1", "__seed", "record");
    } finally {
      child.destroyForcibly();
    }
  }

  @Test
  void aPatchIsTakenByANewRunButNotByARunThatPassedItUnderTheOldCode() {
    WorkflowClient client = server.client();
    Workflow<String, String> old =
        Workflow.define("patchy", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().run("a", String.class, () -> "a");
                  ctx.step().waitForEvent("go", String.class, Match.any(), Duration.ofMinutes(1));
                  return ctx.step().run("c", String.class, () -> "old");
                });
    Workflow<String, String> patched =
        Workflow.define("patchy", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().run("a", String.class, () -> "a");
                  boolean extra = ctx.patched("extra-step");
                  if (extra) {
                    ctx.step().run("extra", String.class, () -> "x");
                  }
                  ctx.step().waitForEvent("go", String.class, Match.any(), Duration.ofMinutes(1));
                  return ctx.step().run("c", String.class, () -> extra ? "new" : "old");
                });

    Worker oldWorker = server.serve(old);
    Started passed = client.start("patchy", "in");
    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(
            () ->
                client.runs().blockers("patchy", passed.runId()).stream()
                    .anyMatch(b -> b.kind().equals("waiting")));
    oldWorker.close();

    server.serve(patched);
    Started fresh = client.start("patchy", "in");
    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(
            () ->
                client.runs().blockers("patchy", fresh.runId()).stream()
                    .anyMatch(b -> b.kind().equals("waiting")));
    client.signal("patchy", passed.runId(), "go", "now");
    client.signal("patchy", fresh.runId(), "go", "now");

    assertThat(
            client
                .runs()
                .awaitResult("patchy", passed.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("old");
    assertThat(
            client
                .runs()
                .awaitResult("patchy", fresh.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("new");
    assertThat(client.runs().steps("patchy", passed.runId()))
        .extracting(StepInfo::name)
        .containsExactly("a", "go", "c");
    assertThat(client.runs().steps("patchy", fresh.runId()))
        .extracting(StepInfo::name)
        .containsExactly("a", "__patch.extra-step", "extra", "go", "c");
  }

  @Test
  void stepNamesStartingWithTwoUnderscoresAreKeptForTheEngine() {
    Workflow<String, String> wf =
        Workflow.define("reserved-name", String.class, String.class)
            .run((ctx, in) -> ctx.step().run("__now.1", String.class, () -> "sneaky"));
    server.serve(wf);
    Started s = server.client().start("reserved-name", "in");
    assertThatThrownBy(
            () ->
                server
                    .client()
                    .runs()
                    .awaitResult("reserved-name", s.runId(), String.class, Duration.ofSeconds(30)))
        .isInstanceOf(WorkflowFailedException.class);
    RunInfo run = server.client().runs().get("reserved-name", s.runId());
    assertThat(run.error().get("message").asText()).contains("kept for the engine");
    List<StepInfo> steps = server.client().runs().steps("reserved-name", s.runId());
    assertThat(steps).isEmpty();
  }
}
