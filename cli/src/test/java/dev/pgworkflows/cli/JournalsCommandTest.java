package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code pgw journals export} against a live server: one file per run, what a replay needs. */
class JournalsCommandTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  private long started(String workflow, String input) {
    return pgw.json("runs", "start", workflow, "--input", input).get("runId").asLong();
  }

  private static JsonNode read(Path file) throws IOException {
    return Json.MAPPER.readTree(Files.readString(file));
  }

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(f -> f.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void everyRunningRunIsWrittenWithItsInputVersionJournalAndWait(@TempDir Path dir)
      throws IOException {
    HandWorker worker = new HandWorker(server.url(), "exported");
    long waiting = started("exported", "{\"orderId\":1}");
    JsonNode task = worker.pollOne();
    assertThat(task.get("runId").asLong()).isEqualTo(waiting);
    worker.journal(task, "charge", "reserve");
    worker.waitFor(task, "payment", "paid");
    long journaled = started("exported", "{\"orderId\":2}");
    worker.journal(worker.pollOne(), "charge");
    long failed = started("exported", "{\"orderId\":4}");
    worker.fail(worker.pollOne());
    long fresh = started("exported", "{\"orderId\":3}");

    Path out = dir.resolve("journals");
    Cli.Result r =
        pgw.ok(
            "journals",
            "export",
            "--workflow",
            "exported",
            "--out",
            out.toString(),
            "--page-size",
            "2");
    assertThat(r.out()).isEqualTo("exported 3 runs of exported (running) to " + out + "\n");
    assertThat(names(out))
        .containsExactlyInAnyOrder(
            "exported-" + waiting + ".json",
            "exported-" + journaled + ".json",
            "exported-" + fresh + ".json");

    JsonNode w = read(out.resolve("exported-" + waiting + ".json"));
    assertThat(w.get("workflow").asText()).isEqualTo("exported");
    assertThat(w.get("runId").asLong()).isEqualTo(waiting);
    assertThat(w.get("version").asInt()).isEqualTo(1);
    assertThat(w.get("status").asText()).isEqualTo("running");
    assertThat(w.get("input").get("orderId").asInt()).isEqualTo(1);
    assertThat(w.at("/waitingFor/step").asText()).isEqualTo("payment");
    assertThat(w.get("steps").findValuesAsText("name")).containsExactly("charge", "reserve");
    assertThat(w.at("/steps/0/kind").asText()).isEqualTo("run");
    assertThat(w.at("/steps/0/output").asText()).isEqualTo("charge-done");
    // The rows as the journal route answers them, field for field.
    assertThat(w.get("steps"))
        .isEqualTo(pgw.json("runs", "steps", "exported", String.valueOf(waiting)).get("steps"));

    JsonNode f = read(out.resolve("exported-" + fresh + ".json"));
    assertThat(f.get("steps")).isEmpty();
    assertThat(f.has("waitingFor")).isFalse();

    Path failures = dir.resolve("failed");
    JsonNode summary =
        pgw.json(
            "journals",
            "export",
            "--workflow",
            "exported",
            "--status",
            "failed",
            "--out",
            failures.toString());
    assertThat(summary.get("exported").asInt()).isEqualTo(1);
    assertThat(summary.get("files").get(0).asText())
        .isEqualTo(failures.resolve("exported-" + failed + ".json").toString());
    assertThat(read(failures.resolve("exported-" + failed + ".json")).get("status").asText())
        .isEqualTo("failed");
  }

  @Test
  void aWorkflowWithoutRunsExportsNothing(@TempDir Path dir) throws IOException {
    Cli.Result r = pgw.ok("journals", "export", "--workflow", "idle", "--out", dir.toString());
    assertThat(r.out()).isEqualTo("exported 0 runs of idle (running) to " + dir + "\n");
    assertThat(names(dir)).isEmpty();
  }

  @Test
  void aWrongStatusIsRefusedByTheServerAndWritesNothing(@TempDir Path dir) {
    started("refused", "{}");
    Path out = dir.resolve("never");
    Cli.Result r =
        pgw.run(
            "journals",
            "export",
            "--workflow",
            "refused",
            "--status",
            "sleeping",
            "--out",
            out.toString());
    assertThat(r.exit()).isEqualTo(ExitCodes.SERVER_ERROR);
    assertThat(r.out()).isEmpty();
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err()).startsWith("pgw: 400 ").contains("status");
    assertThat(out).doesNotExist();
  }

  @Test
  void aMissingWorkflowOrAnOutThatCannotBeWrittenIsAUsageError(@TempDir Path dir)
      throws IOException {
    Cli.Result none = pgw.run("journals", "export");
    assertThat(none.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(none.err()).contains("--workflow");

    Path file = Files.writeString(dir.resolve("a-file"), "x");
    Cli.Result notADir = pgw.run("journals", "export", "--workflow", "w", "--out", file.toString());
    assertThat(notADir.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(notADir.err()).contains("--out " + file + " is not a directory");
    assertThat(Files.readString(file)).isEqualTo("x");

    started("unwritable", "{}");
    Path under = file.resolve("journals");
    Cli.Result cannot =
        pgw.run("journals", "export", "--workflow", "unwritable", "--out", under.toString());
    assertThat(cannot.exit()).as(cannot.err()).isEqualTo(ExitCodes.USAGE);
    assertThat(cannot.err()).startsWith("pgw: --out: cannot write " + under.resolve("unwritable-"));
    assertThat(Files.readString(file)).isEqualTo("x");
  }
}
