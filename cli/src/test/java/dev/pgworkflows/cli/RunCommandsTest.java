package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code pgw workflows} and {@code pgw runs} against a live server, for people and with --json. */
class RunCommandsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void aStartedRunIsListedShownAndCountedForItsWorkflow() {
    Cli.Result started = pgw.ok("runs", "start", "order", "--input", "{\"orderId\":7}");
    assertThat(started.out()).matches("run \\d+ started: running\\R");
    long runId = Long.parseLong(started.out().split(" ")[1]);

    JsonNode run = pgw.json("runs", "get", "order", String.valueOf(runId));
    assertThat(run.get("runId").asLong()).isEqualTo(runId);
    assertThat(run.get("input").get("orderId").asInt()).isEqualTo(7);
    assertThat(pgw.ok("runs", "get", "order", String.valueOf(runId)).out())
        .containsPattern("(?m)^status +running$")
        .containsPattern("(?m)^input +\\{\"orderId\":7}$");

    Cli.Result list = pgw.ok("runs", "list", "order", "--status", "running");
    assertThat(list.lines().get(0)).startsWith("RUN").contains("STATUS", "INPUT");
    assertThat(list.out())
        .containsPattern("(?m)^" + runId + " +running ")
        .contains("{\"orderId\":7}");

    JsonNode workflows = pgw.json("workflows");
    assertThat(workflows.get("workflows").findValuesAsText("name")).contains("order");
    assertThat(pgw.ok("workflows", "list").out()).contains("order").contains("RUNNING");
  }

  @Test
  void aStartTakesItsOptionsAndAKeyAnswersTheSameRun() {
    String first =
        pgw.ok(
                "runs",
                "start",
                "options",
                "--key",
                "order-7",
                "--priority",
                "5",
                "--concurrency-key",
                "customer-42",
                "--delay-ms",
                "600000",
                "--version",
                "1")
            .out();
    assertThat(first).matches("run \\d+ started: running\\R");
    String run = first.split(" ")[1];
    assertThat(pgw.ok("runs", "start", "options", "--key", "order-7").out())
        .isEqualTo("run " + run + " was started before with this key: running\n");

    JsonNode view = pgw.json("runs", "get", "options", run);
    assertThat(view.get("priority").asInt()).isEqualTo(5);
    assertThat(view.get("concurrencyKey").asText()).isEqualTo("customer-42");
    assertThat(view.get("idempotencyKey").asText()).isEqualTo("order-7");
    assertThat(view.has("dueAt")).isTrue();
    assertThat(pgw.json("runs", "list", "options").get("runs")).hasSize(1);
  }

  @Test
  void theListFiltersByInputAndPagesWithTheCursor() {
    for (int i = 1; i <= 3; i++) {
      pgw.ok("runs", "start", "paging", "--input", "{\"tier\":\"gold\",\"n\":" + i + "}");
    }
    pgw.ok("runs", "start", "paging", "--input", "{\"tier\":\"silver\",\"n\":4}");

    JsonNode gold = pgw.json("runs", "list", "paging", "--input", "tier=gold");
    assertThat(gold.get("runs").findValuesAsText("status")).hasSize(3);
    JsonNode first = pgw.json("runs", "list", "paging", "--limit", "2");
    assertThat(first.get("runs")).hasSize(2);
    String cursor = first.get("nextCursor").asText();
    assertThat(pgw.ok("runs", "list", "paging", "--limit", "2").out())
        .contains("more: --after " + cursor);
    JsonNode second = pgw.json("runs", "list", "paging", "--limit", "2", "--after", cursor);
    assertThat(second.get("runs")).hasSize(2);
    assertThat(second.get("runs").get(0).get("runId").asLong())
        .isLessThan(first.get("runs").get(1).get("runId").asLong());
    assertThat(pgw.json("runs", "list", "paging", "--since", "2999-01-01").get("runs")).isEmpty();
    assertThat(pgw.json("runs", "list", "paging", "--until", "2999-01-01").get("runs")).hasSize(4);
    assertThat(pgw.json("runs", "list", "paging", "--parent", "1").get("runs")).isEmpty();
  }

  @Test
  void stepsShowTheJournalAWorkerWrote() {
    String run = pgw.json("runs", "start", "journal", "--input", "{\"x\":1}").get("runId").asText();
    HandWorker worker = new HandWorker(server.url(), "journal");
    JsonNode task = worker.pollOne();
    worker.journal(task, "charge", "ship");
    worker.fail(task);

    JsonNode steps = pgw.json("runs", "steps", "journal", run);
    assertThat(steps.get("steps").findValuesAsText("name")).containsExactly("charge", "ship");
    Cli.Result table = pgw.ok("runs", "steps", "journal", run);
    assertThat(table.lines().get(0)).startsWith("STEP").contains("KIND", "ATTEMPTS", "OUTPUT");
    assertThat(table.lines().get(1))
        .matches("charge +run +1 +\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ +\\S+ +charge-done");
    assertThat(pgw.ok("runs", "get", "journal", run).out())
        .containsPattern("(?m)^status +failed$")
        .containsPattern("(?m)^error +\\{.*\"card declined\".*}$");
    assertThat(pgw.ok("runs", "list", "journal", "--status", "failed").out())
        .containsPattern("(?m)^" + run + " +failed ");
  }

  @Test
  void aSignalIsBufferedOnceForItsKeyAndListed() {
    String run = pgw.json("runs", "start", "signalled").get("runId").asText();

    assertThat(
            pgw.ok(
                    "runs",
                    "signal",
                    "signalled",
                    run,
                    "paid",
                    "--data",
                    "{\"amount\":5}",
                    "--key",
                    "p-1")
                .out())
        .matches("signal \\d+: buffered\\R");
    JsonNode again =
        pgw.json(
            "runs", "signal", "signalled", run, "paid", "--data", "{\"amount\":5}", "--key", "p-1");
    assertThat(again.get("outcome").asText()).isEqualTo("duplicate");

    JsonNode signals = pgw.json("runs", "signals", "signalled", run);
    assertThat(signals.get("signals")).hasSize(1);
    assertThat(signals.get("signals").get(0).get("payload").get("amount").asInt()).isEqualTo(5);
    assertThat(pgw.ok("runs", "signals", "signalled", run).out())
        .contains("paid", "{\"amount\":5}");
  }

  @Test
  void cancellingARunEndsItAndSaysSoOnlyOnce() {
    String run = pgw.json("runs", "start", "cancelled").get("runId").asText();

    assertThat(pgw.ok("runs", "cancel", "cancelled", run).out())
        .isEqualTo("run " + run + ": cancelled\n");
    assertThat(pgw.json("runs", "get", "cancelled", run).get("status").asText())
        .isEqualTo("cancelled");
    assertThat(pgw.ok("runs", "cancel", "cancelled", run).out())
        .isEqualTo("run " + run + " had ended already: cancelled\n");
  }
}
