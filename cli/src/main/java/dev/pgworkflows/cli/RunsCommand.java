package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pgw runs}: a workflow's runs. Every command but list, search, count and start takes
 * WORKFLOW RUN_ID.
 */
@Command(
    name = "runs",
    description = "A workflow's runs; a run is addressed as WORKFLOW RUN_ID.",
    synopsisSubcommandLabel = "COMMAND",
    subcommands = {
      RunsCommand.List.class,
      SearchCommands.Search.class,
      SearchCommands.Count.class,
      RunsCommand.Get.class,
      RunsCommand.Start.class,
      RunJournalCommands.Steps.class,
      RunJournalCommands.Signals.class,
      CallbacksCommand.List.class,
      UpdatesCommand.List.class,
      RunOperationCommands.Signal.class,
      UpdatesCommand.Send.class,
      RunOperationCommands.Cancel.class,
      RunOperationCommands.Pause.class,
      RunOperationCommands.Resume.class,
      RunOperationCommands.Restart.class,
      RunOperationCommands.Fork.class,
      StepRetryCommands.Show.class,
      StepRetryCommands.Pause.class,
      StepRetryCommands.Resume.class,
      StepRetryCommands.Reset.class,
      StepRetryCommands.Options.class,
      RunJournalCommands.Blockers.class,
      SearchCommands.Attributes.class,
      RunViewCommands.State.class,
      RunViewCommands.Streams.class,
      RunViewCommands.Chain.class
    })
final class RunsCommand {
  private RunsCommand() {}

  /** A command that answers a run view: its fields, one a line. */
  abstract static class RunView extends ApiCommand {
    @Mixin RunAddress run;

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Cells.fields(answer, out);
    }
  }

  @Command(name = "list", description = "A workflow's runs, newest first, a page at a time.")
  static final class List extends ApiCommand {
    @Parameters(index = "0", paramLabel = "WORKFLOW", description = "The workflow.")
    String workflow;

    @Option(
        names = "--status",
        paramLabel = "STATUS",
        completionCandidates = RunStatuses.class,
        description = "Only runs with this status: ${COMPLETION-CANDIDATES}.")
    String status;

    @Option(names = "--parent", paramLabel = "RUN_ID", description = "Only this run's children.")
    Long parent;

    @Option(
        names = "--since",
        paramLabel = "TIME",
        description = "Started at or after (a date or an RFC 3339 time).")
    String since;

    @Option(names = "--until", paramLabel = "TIME", description = "Started before.")
    String until;

    @Option(
        names = "--input",
        paramLabel = "PATH=VALUE",
        description =
            "Only runs whose input has this value at this path (repeatable), e.g."
                + " --input customer.tier=gold.")
    Map<String, String> input;

    @Option(
        names = "--after",
        paramLabel = "CURSOR",
        description = "The page after this cursor (the next cursor a page ends with).")
    String after;

    @Option(names = "--limit", paramLabel = "N", description = "Runs per page (default 50).")
    Integer limit;

    @Override
    Answer request(Api api) {
      var params = Api.params();
      params.put("status", status);
      params.put("parent", parent);
      params.put("since", since);
      params.put("until", until);
      if (input != null) {
        input.forEach((path, value) -> params.put("input." + path, value));
      }
      params.put("cursor", after);
      params.put("limit", limit);
      return api.get(Api.path("v1", "workflows", workflow, "runs") + Api.query(params));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("RUN", "STATUS", "VERSION", "STARTED", "COMPLETED", "INPUT");
      for (JsonNode r : answer.path("runs")) {
        table.row(
            r.path("runId").asLong(),
            r.path("status").asText(),
            r.path("version").asInt(),
            Cells.cell(r.path("startedAt")),
            Cells.cell(r.path("completedAt")),
            Cells.cell(r.path("input")));
      }
      table.print(out);
      Cells.more(answer, out);
    }
  }

  @Command(name = "get", description = "A run: status, input, output or error, and more.")
  static final class Get extends RunView {
    @Override
    Answer request(Api api) {
      return api.get(run.path());
    }
  }

  @Command(name = "start", description = "Start a run of a workflow.")
  static final class Start extends ApiCommand {
    @Parameters(index = "0", paramLabel = "WORKFLOW", description = "The workflow.")
    String workflow;

    @Option(
        names = "--input",
        paramLabel = "JSON",
        converter = JsonArgument.class,
        description = "The run's input.")
    JsonNode input;

    @Option(
        names = "--key",
        paramLabel = "IDEMPOTENCY_KEY",
        description = "A start with the same key answers the run it started.")
    String key;

    @Option(names = "--version", paramLabel = "N", description = "The workflow version.")
    Integer version;

    @Option(names = "--concurrency-key", paramLabel = "KEY", description = "The run's key.")
    String concurrencyKey;

    @Option(names = "--priority", paramLabel = "0-9", description = "Higher first (default 0).")
    Integer priority;

    @Option(names = "--delay-ms", paramLabel = "MS", description = "Make the first task due later.")
    Long delayMs;

    @Option(
        names = "--attributes",
        paramLabel = "JSON",
        converter = JsonArgument.class,
        description = "The run's search attributes, e.g. '{\"customer\": \"acme\"}'.")
    JsonNode attributes;

    @Override
    Answer request(Api api) {
      ObjectNode body = Json.object();
      if (input != null) {
        body.set("input", input);
      }
      if (key != null) {
        body.put("idempotencyKey", key);
      }
      if (version != null) {
        body.put("version", version);
      }
      if (concurrencyKey != null) {
        body.put("concurrencyKey", concurrencyKey);
      }
      if (priority != null) {
        body.put("priority", priority);
      }
      if (delayMs != null) {
        body.put("delayMs", delayMs);
      }
      if (attributes != null) {
        body.set("attributes", attributes);
      }
      return api.post(Api.path("v1", "workflows", workflow, "runs"), body);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      String run = "run " + answer.path("runId").asLong();
      String status = answer.path("status").asText();
      String admission = answer.path("admission").asText("");
      if (admission.equals("skipped")) {
        out.println("skipped: " + run + " of the key is running");
      } else if (answer.path("created").asBoolean()) {
        out.println(
            run
                + " started: "
                + status
                + (admission.equals("queued") ? " (queued: its key is full)" : ""));
      } else {
        out.println(run + " was started before with this key: " + status);
      }
      if (answer.path("cancelledRuns").size() > 0) {
        StringBuilder runs = new StringBuilder();
        answer
            .get("cancelledRuns")
            .forEach(r -> runs.append(runs.isEmpty() ? "" : ", ").append(r.asLong()));
        out.println("cancelled: " + runs);
      }
    }
  }
}
