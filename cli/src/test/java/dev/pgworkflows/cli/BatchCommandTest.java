package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pgw batch}: a dry run counts the runs a query selects; a cancel job made of the query
 * cancels them, as its progress and its runs' outcomes show; a bad action exits 1 naming the field
 * and makes no job.
 */
class BatchCommandTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void aDryRunCountsAndACancelJobCancelsTheRunsItSelected() throws InterruptedException {
    for (int i = 0; i < 5; i++) {
      server.api().post("/v1/workflows/export/runs", Map.of("input", i));
    }
    server.api().post("/v1/workflows/other/runs", Map.of("input", 0));
    String query = "workflow = 'export' AND status = 'running'";
    assertThat(pgw.ok("batch", "create", "cancel", query, "--dry-run").out().strip())
        .isEqualTo("cancel would act on 5 runs");
    assertThat(pgw.ok("batch", "create", "cancel", query, "--rate", "2").out().strip())
        .isEqualTo("batch 1: cancel of 5 runs, running");

    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!pgw.ok("batch", "get", "1").out().contains("completed")) {
      assertThat(System.nanoTime()).as("batch 1 completes").isLessThan(deadline);
      Thread.sleep(200);
    }
    assertThat(pgw.ok("batch", "get", "1").out()).containsPattern("(?m)^done +5$");
    assertThat(pgw.ok("batch").out())
        .containsPattern("(?m)^1 +cancel +completed +5 +5 +0 +0 +workflow = 'export'");
    Cli.Result runs = pgw.ok("batch", "runs", "1");
    assertThat(runs.lines()).hasSize(6);
    assertThat(runs.lines().get(1)).containsPattern("^5 +done");
    assertThat(server.api().get("/v1/workflows/other/runs").json().at("/runs/0/status").asText())
        .isEqualTo("running");

    Cli.Result bad = pgw.run("batch", "create", "delete", query);
    assertThat(bad.exit()).isEqualTo(1);
    assertThat(bad.err()).contains("action must be cancel, signal, pause, resume or restart");
    assertThat(pgw.ok("batch").lines()).hasSize(2);
  }
}
