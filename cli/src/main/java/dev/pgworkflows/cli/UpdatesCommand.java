package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * A run's updates: {@code pgw runs update} sends one and waits for its answer; {@code pgw runs
 * updates} lists them.
 */
final class UpdatesCommand {
  private UpdatesCommand() {}

  /** {@code pgw runs update WORKFLOW RUN_ID UPDATE}. */
  @Command(
      name = "update",
      description =
          "Send a run an update and wait for its handler's answer (a refusal exits with the"
              + " server's 409).")
  static final class Send extends ApiCommand {
    @Mixin RunAddress run;

    @Parameters(index = "2", paramLabel = "UPDATE", description = "The update's name.")
    String update;

    @Option(
        names = "--input",
        paramLabel = "JSON",
        converter = JsonArgument.class,
        description = "The update's input (default null).")
    JsonNode input;

    @Option(
        names = "--wait",
        paramLabel = "SECONDS",
        defaultValue = "30",
        description = "How long to wait for the answer, 0 to 60 (default ${DEFAULT-VALUE}).")
    int wait;

    @Option(
        names = "--key",
        paramLabel = "IDEMPOTENCY_KEY",
        description = "A repeat of this key for the run answers the first update.")
    String key;

    @Override
    Answer request(Api api) {
      var body = Json.object();
      if (input != null) {
        body.set("input", input);
      }
      body.put("waitSeconds", wait);
      Map<String, String> headers = key == null ? Map.of() : Map.of("Idempotency-Key", key);
      return api.send("POST", run.path("updates", update), body, headers);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      String head = "update " + answer.path("updateId").asLong() + ": ";
      switch (answer.path("status").asText()) {
        case "completed" -> out.println(head + "completed: " + answer.path("output"));
        case "failed" ->
            out.println(head + "failed: " + answer.path("error").path("message").asText());
        default -> out.println(head + "pending (not answered yet)");
      }
    }
  }

  /** {@code pgw runs updates WORKFLOW RUN_ID}. */
  @Command(name = "updates", description = "A run's updates, oldest first, with their answers.")
  static final class List extends ApiCommand {
    @Mixin RunAddress run;

    @Override
    Answer request(Api api) {
      return api.get(run.path("updates"));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("ID", "UPDATE", "STATUS", "SENT", "ANSWERED", "ANSWER");
      for (JsonNode u : answer.path("updates")) {
        table.row(
            Cells.cell(u.path("updateId")),
            Cells.cell(u.path("update")),
            Cells.cell(u.path("status")),
            Cells.cell(u.path("sentAt")),
            Cells.cell(u.path("answeredAt")),
            "completed".equals(u.path("status").asText())
                ? u.path("output").toString()
                : Cells.cell(u.path("error").path("message")));
      }
      table.print(out);
    }
  }
}
