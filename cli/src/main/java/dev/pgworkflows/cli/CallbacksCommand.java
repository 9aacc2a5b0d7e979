package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code pgw callbacks}: the key callback tokens are minted under; a run's callbacks are {@code pgw
 * runs callbacks WORKFLOW RUN_ID} ({@link List}).
 */
@Command(
    name = "callbacks",
    description = "The key callback tokens are minted under (a run's: pgw runs callbacks).",
    synopsisSubcommandLabel = "COMMAND",
    subcommands = {CallbacksCommand.RotateKey.class})
final class CallbacksCommand {
  private CallbacksCommand() {}

  /** {@code pgw runs callbacks WORKFLOW RUN_ID}. */
  @Command(
      name = "callbacks",
      description =
          "A run's callbacks, oldest first, with their times and outcomes (never tokens).")
  static final class List extends ApiCommand {
    @Mixin RunAddress run;

    @Override
    Answer request(Api api) {
      return api.get(run.path("callbacks"));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("NAME", "CREATED", "EXPIRES", "RESOLVED", "OUTCOME");
      for (JsonNode c : answer.path("callbacks")) {
        table.row(
            Cells.cell(c.path("name")),
            Cells.cell(c.path("createdAt")),
            Cells.cell(c.path("expiresAt")),
            Cells.cell(c.path("resolvedAt")),
            Cells.cell(c.path("outcome")));
      }
      table.print(out);
    }
  }

  @Command(
      name = "rotate-key",
      description =
          "Mint new callbacks under a new key; tokens minted before keep working (scope admin).")
  static final class RotateKey extends ApiCommand {
    @Override
    Answer request(Api api) {
      return api.post("/v1/callback-keys", null);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println("new callbacks are minted under key " + answer.path("keyId").asText());
    }
  }
}
