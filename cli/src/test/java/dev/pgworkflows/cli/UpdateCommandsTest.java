package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pgw runs update}: sends an update and prints its handler's answer, a refusal exiting as a
 * conflict with the reason; {@code pgw runs updates}: a run's updates as a table.
 */
class UpdateCommandsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  /** Answers the next update task of {@code worker}'s workflow with {@code answer}, meanwhile. */
  private static CompletableFuture<Void> answerNext(
      WorkerClient worker, Map<String, Object> answer) {
    return CompletableFuture.runAsync(() -> worker.answerUpdate(worker.pollOne(), answer));
  }

  @Test
  void anUpdatesAnswerIsPrintedARefusalExitsAsAConflictAndTheRunsUpdatesAreListed() {
    WorkerClient worker = server.worker("carts");
    String run = Long.toString(worker.start(Map.of()));
    worker.complete(worker.pollOne(), Map.of("next", Map.of("delayMs", 600_000)));

    CompletableFuture<Void> answered =
        answerNext(worker, Map.of("status", "completed", "output", Map.of("items", 1)));
    Cli.Result sent =
        pgw.ok("runs", "update", "carts", run, "addItem", "--input", "{\"sku\": \"tea\"}");
    answered.join();
    assertThat(sent.out().strip()).matches("update \\d+: completed: \\{\"items\":1}");

    answered =
        answerNext(worker, Map.of("status", "refused", "error", Map.of("message", "sold out")));
    Cli.Result refused = pgw.run("runs", "update", "carts", run, "addItem", "--input", "\"cake\"");
    answered.join();
    assertThat(refused.exit()).isEqualTo(ExitCodes.CONFLICT);
    assertThat(refused.err()).contains("update addItem was refused: sold out");

    Cli.Result listed = pgw.ok("runs", "updates", "carts", run);
    assertThat(listed.lines().get(0)).startsWith("ID").contains("STATUS").contains("ANSWER");
    assertThat(listed.lines().get(1))
        .contains("addItem")
        .contains("completed")
        .endsWith("{\"items\":1}");
    assertThat(listed.lines().get(2)).contains("refused").endsWith("sold out");

    Cli.Result bad = pgw.run("runs", "update", "carts", run, "addItem", "--wait", "61");
    assertThat(bad.exit()).isNotZero();
    assertThat(bad.err()).contains("waitSeconds");
  }
}
