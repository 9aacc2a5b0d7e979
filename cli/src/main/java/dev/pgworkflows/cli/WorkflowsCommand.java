package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code pgw workflows}: every workflow with its run counts; pausing and resuming one; its
 * concurrency limit ({@link ConcurrencyCommand}), throttle ({@link ThrottleCommand}) and routing
 * ({@link RoutingCommand}).
 */
@Command(
    name = "workflows",
    description = "Every workflow with its runs by status (also: workflows list).",
    subcommands = {
      WorkflowsCommand.List.class,
      WorkflowsCommand.Pause.class,
      WorkflowsCommand.Resume.class,
      ConcurrencyCommand.class,
      ThrottleCommand.class,
      RoutingCommand.class
    })
final class WorkflowsCommand extends ApiCommand {
  @Override
  Answer request(Api api) {
    return api.get("/v1/workflows");
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    Table table =
        new Table("WORKFLOW", "PAUSED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMED OUT");
    for (JsonNode w : answer.path("workflows")) {
      table.row(
          w.path("name").asText(),
          w.has("paused") ? (w.get("paused").asBoolean() ? "yes" : "no") : "-",
          w.path("running").asLong(),
          w.path("completed").asLong(),
          w.path("failed").asLong(),
          w.path("cancelled").asLong(),
          w.path("timedOut").asLong());
    }
    table.print(out);
  }

  @Command(name = "list", description = "Every workflow with its runs by status.")
  static final class List extends ApiCommand {
    private final WorkflowsCommand all = new WorkflowsCommand();

    @Override
    Answer request(Api api) {
      return all.request(api);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      all.show(answer, out);
    }
  }

  /** Pausing or resuming a workflow: both answer its state. */
  abstract static class Switch extends ApiCommand {
    @Parameters(index = "0", paramLabel = "WORKFLOW", description = "The workflow's name.")
    String name;

    @Override
    void show(JsonNode answer, PrintWriter out) {
      boolean paused = answer.path("paused").asBoolean();
      out.println(
          answer.path("name").asText(name)
              + ": "
              + (paused ? "paused since " + Cells.full(answer.path("pausedAt")) : "not paused"));
    }
  }

  @Command(
      name = "pause",
      description =
          "Hand out no run of the workflow until it is resumed; starts are still accepted.")
  static final class Pause extends Switch {
    @Override
    Answer request(Api api) {
      return api.post(Api.path("v1", "workflows", name, "pause"), null);
    }
  }

  @Command(name = "resume", description = "Hand out the workflow's runs again.")
  static final class Resume extends Switch {
    @Override
    Answer request(Api api) {
      return api.post(Api.path("v1", "workflows", name, "resume"), null);
    }
  }
}
