package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator's commands against a live server: pausing runs and workflows, restarting and forking
 * runs, what blocks a run, the workers seen, and holding back, parking and redriving a queue group.
 */
class OperationCommandsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  /** A failed run of {@code workflow} whose journal holds these steps. */
  private String failedRun(String workflow, String... steps) {
    String run =
        pgw.json("runs", "start", workflow, "--input", "{\"card\":42}").get("runId").asText();
    HandWorker worker = new HandWorker(server.url(), workflow);
    JsonNode task = worker.pollOne();
    worker.journal(task, steps);
    worker.fail(task);
    assertThat(pgw.json("runs", "get", workflow, run).get("status").asText()).isEqualTo("failed");
    return run;
  }

  @Test
  void aFailedRunRestartsFromAStepAndTheLaterRowsAreSetAside() {
    String run = failedRun("billing", "reserve", "charge");

    Cli.Result unknown = pgw.run("runs", "restart", "billing", run, "--from", "no-such-step");
    assertThat(unknown.exit()).isEqualTo(ExitCodes.SERVER_ERROR);
    assertThat(unknown.err()).startsWith("pgw: 400 Bad Request: ").contains("no-such-step");
    assertThat(pgw.json("runs", "get", "billing", run).get("status").asText()).isEqualTo("failed");

    Cli.Result restarted = pgw.ok("runs", "restart", "billing", run, "--from", "charge");
    assertThat(restarted.out()).containsPattern("(?m)^status +running$");
    assertThat(pgw.json("runs", "steps", "billing", run).get("steps").findValuesAsText("name"))
        .containsExactly("reserve");
    Cli.Result all = pgw.ok("runs", "steps", "billing", run, "--set-aside");
    assertThat(all.lines().get(0)).contains("SET ASIDE");
    assertThat(all.out())
        .containsPattern("(?m)^reserve .* no +reserve-done$")
        .containsPattern("(?m)^charge .* yes +charge-done$");

    Cli.Result again = pgw.run("runs", "restart", "billing", run, "--from", "charge");
    assertThat(again.exit()).isEqualTo(ExitCodes.CONFLICT);
    assertThat(again.err()).startsWith("pgw: 409 Conflict: ");
  }

  @Test
  void aForkIsANewRunWithTheJournalBeforeItsStep() {
    String run = failedRun("shipping", "pack", "label", "send");

    JsonNode fork =
        pgw.json("runs", "fork", "shipping", run, "--from", "label", "--input", "{\"card\":7}");
    String forked = fork.get("runId").asText();
    assertThat(forked).isNotEqualTo(run);
    assertThat(fork.get("status").asText()).isEqualTo("running");
    assertThat(fork.at("/forkedFrom/runId").asText()).isEqualTo(run);
    assertThat(fork.at("/forkedFrom/step").asText()).isEqualTo("label");
    assertThat(pgw.json("runs", "steps", "shipping", forked).get("steps").findValuesAsText("name"))
        .containsExactly("pack");
    assertThat(pgw.ok("runs", "get", "shipping", forked).out())
        .containsPattern("(?m)^input +\\{\"card\":7}$")
        .containsPattern("(?m)^forkedFrom +\\{\"runId\":" + run + ",\"step\":\"label\"}$");
    assertThat(pgw.json("runs", "get", "shipping", run).get("status").asText()).isEqualTo("failed");

    assertThat(pgw.run("runs", "fork", "shipping", run, "--from", "nowhere").exit())
        .isEqualTo(ExitCodes.SERVER_ERROR);
    assertThat(pgw.json("runs", "list", "shipping").get("runs")).hasSize(2);
  }

  @Test
  void aPausedRunOrWorkflowSaysSoInItsBlockers() {
    String run = pgw.json("runs", "start", "held").get("runId").asText();

    assertThat(pgw.ok("runs", "pause", "held", run).out()).containsPattern("(?m)^paused +true$");
    Cli.Result blockers = pgw.ok("runs", "blockers", "held", run);
    assertThat(blockers.lines().get(0)).isEqualTo("run " + run + ": running");
    assertThat(blockers.out()).containsPattern("(?m)^paused +");
    assertThat(pgw.json("runs", "blockers", "held", run).get("blockers").findValuesAsText("kind"))
        .contains("paused");
    assertThat(pgw.json("runs", "resume", "held", run).get("paused").asBoolean()).isFalse();

    assertThat(pgw.ok("workflows", "pause", "held").out()).startsWith("held: paused since ");
    assertThat(pgw.json("runs", "blockers", "held", run).get("blockers").findValuesAsText("kind"))
        .contains("workflow_paused")
        .doesNotContain("paused");
    assertThat(pgw.ok("workflows").out()).containsPattern("(?m)^held +yes ");
    JsonNode resumed = pgw.json("workflows", "resume", "held");
    assertThat(resumed.get("paused").asBoolean()).isFalse();
    assertThat(resumed.get("pausedAt").isNull()).isTrue();

    assertThat(pgw.run("runs", "pause", "held", "987654").exit()).isEqualTo(ExitCodes.NOT_FOUND);
  }

  @Test
  void aWorkerThatPolledIsListed() {
    pgw.ok("runs", "start", "seen");
    new HandWorker(server.url(), "seen").pollOne();

    JsonNode workers =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () -> pgw.json("workers", "--workflow", "seen").get("workers"), w -> w.size() == 1);
    assertThat(workers.get(0).get("id").asText()).isEqualTo("hand-1");
    assertThat(workers.get(0).get("slots").asInt()).isEqualTo(4);
    Cli.Result table = pgw.ok("workers");
    assertThat(table.lines().get(0))
        .startsWith("ID")
        .contains("HOST", "SLOTS", "MODE", "LABELS", "LAST SEEN");
    assertThat(table.out()).containsPattern("(?m)^hand-1 +seen +test-host +.* 4 +poll +gpu=true ");
    assertThat(pgw.json("workers", "--workflow", "nobody").get("workers")).isEmpty();
  }

  @Test
  void aParkedHeadLetsItsGroupMoveOnUntilItIsRedriven() {
    pgw.ok("queues", "create", "payments", "--fifo");
    pgw.ok("queues", "send", "payments", "{\"n\":1}", "--group", "acct-1");
    pgw.ok("queues", "send", "payments", "{\"n\":2}", "--group", "acct-1");

    assertThat(pgw.ok("queues", "pause-group", "payments", "acct-1").out())
        .isEqualTo("payments group acct-1: paused\n");
    assertThat(pgw.json("queues", "receive", "payments").get("messages")).isEmpty();
    assertThat(pgw.json("queues", "resume-group", "payments", "acct-1").get("paused").asBoolean())
        .isFalse();

    Cli.Result parked = pgw.ok("queues", "park", "payments", "acct-1");
    assertThat(parked.out()).matches("parked \\d+: message \\d+ of group acct-1\\R");
    JsonNode list = pgw.json("queues", "parked", "payments");
    assertThat(list.get("messages")).hasSize(1);
    assertThat(pgw.ok("queues", "parked", "payments").out()).contains("PARKED ID", "{\"n\":1}");
    JsonNode next = pgw.json("queues", "receive", "payments").get("messages");
    assertThat(next.get(0).get("body").get("n").asInt()).isEqualTo(2);
    pgw.ok("queues", "delete-message", "payments", next.get(0).get("id").asText());

    String parkedId = list.get("messages").get(0).get("id").asText();
    assertThat(pgw.ok("queues", "redrive-parked", "payments", parkedId).out())
        .startsWith("parked " + parkedId + ": back in the queue as message ");
    assertThat(pgw.json("queues", "parked", "payments").get("messages")).isEmpty();
    JsonNode back = pgw.json("queues", "receive", "payments").get("messages");
    assertThat(back.get(0).get("body").get("n").asInt()).isEqualTo(1);

    assertThat(pgw.run("queues", "park", "payments", "empty-group").exit())
        .isEqualTo(ExitCodes.NOT_FOUND);
  }
}
