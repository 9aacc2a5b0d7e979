package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pgw batch}: bulk operations, an action on every run a query selects, made by the server a
 * page a second. {@code pgw batch create ACTION QUERY --dry-run} counts the runs first.
 */
@Command(
    name = "batch",
    description =
        "Bulk operations on the runs a query selects (also: batch create, get, runs, cancel).",
    subcommands = {
      BatchCommand.Create.class,
      BatchCommand.Get.class,
      BatchCommand.Runs.class,
      BatchCommand.Cancel.class
    })
final class BatchCommand extends ApiCommand {
  @Option(
      names = "--after",
      paramLabel = "CURSOR",
      description = "The page after this cursor (the next cursor a page ends with).")
  String after;

  @Override
  Answer request(Api api) {
    var params = Api.params();
    params.put("cursor", after);
    return api.get("/v1/batches" + Api.query(params));
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    Table table =
        new Table("BATCH", "ACTION", "STATUS", "SELECTED", "DONE", "SKIPPED", "FAILED", "QUERY");
    for (JsonNode b : answer.path("batches")) {
      table.row(
          b.path("batchId").asLong(),
          b.path("action").asText(),
          b.path("status").asText(),
          b.path("selected").asLong(),
          b.path("done").asLong(),
          b.path("skipped").asLong(),
          b.path("failed").asLong(),
          b.path("query").asText());
    }
    table.print(out);
    Cells.more(answer, out);
  }

  /** A job's progress, one field a line. */
  static void progress(JsonNode b, PrintWriter out) {
    Cells.fields(b, out);
  }

  @Command(
      name = "create",
      description =
          "Act on every run QUERY selects: cancel, signal, pause, resume or restart (from the"
              + " failed step, or --from-step).")
  static final class Create extends ApiCommand {
    @Parameters(
        index = "0",
        paramLabel = "ACTION",
        description = "cancel, signal, pause, resume or restart.")
    String action;

    @Parameters(
        index = "1",
        paramLabel = "QUERY",
        description = "The runs, e.g. \"status = 'failed'\".")
    String query;

    @Option(names = "--event", paramLabel = "EVENT", description = "The signal's event (signal).")
    String event;

    @Option(
        names = "--payload",
        paramLabel = "JSON",
        converter = JsonArgument.class,
        description = "The signal's payload (signal).")
    JsonNode payload;

    @Option(names = "--from-step", paramLabel = "STEP", description = "Restart from this step.")
    String fromStep;

    @Option(names = "--rate", paramLabel = "N", description = "Runs per second (default 100).")
    Integer rate;

    @Option(names = "--confirm", description = "Needed when the query selects more than 1000 runs.")
    boolean confirm;

    @Option(names = "--dry-run", description = "Only count the runs the query selects.")
    boolean dryRun;

    @Override
    Answer request(Api api) {
      if (dryRun) {
        var params = Api.params();
        params.put("query", query);
        return api.get("/v1/runs/count" + Api.query(params));
      }
      ObjectNode body = Json.object();
      body.put("action", action);
      body.put("query", query);
      if (event != null) {
        body.put("event", event);
      }
      if (payload != null) {
        body.set("payload", payload);
      }
      if (fromStep != null) {
        body.put("fromStep", fromStep);
      }
      if (rate != null) {
        body.put("ratePerSecond", rate);
      }
      if (confirm) {
        body.put("confirm", true);
      }
      return api.post("/v1/batches", body);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      if (dryRun) {
        out.println(action + " would act on " + answer.path("count").asLong() + " runs");
        return;
      }
      out.println(
          "batch "
              + answer.path("batchId").asLong()
              + ": "
              + action
              + " of "
              + answer.path("selected").asLong()
              + " runs, running");
    }
  }

  @Command(name = "get", description = "A bulk operation and how far it has come.")
  static final class Get extends ApiCommand {
    @Parameters(index = "0", paramLabel = "BATCH_ID", description = "The batch.")
    long batchId;

    @Override
    Answer request(Api api) {
      return api.get(Api.path("v1", "batches", batchId));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      progress(answer, out);
    }
  }

  @Command(name = "runs", description = "What a bulk operation did to each run, newest first.")
  static final class Runs extends ApiCommand {
    @Parameters(index = "0", paramLabel = "BATCH_ID", description = "The batch.")
    long batchId;

    @Option(names = "--outcome", paramLabel = "OUTCOME", description = "done, skipped or failed.")
    String outcome;

    @Option(names = "--after", paramLabel = "CURSOR", description = "The page after this cursor.")
    String after;

    @Override
    Answer request(Api api) {
      var params = Api.params();
      params.put("outcome", outcome);
      params.put("cursor", after);
      return api.get(Api.path("v1", "batches", batchId, "runs") + Api.query(params));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("RUN", "OUTCOME", "AT", "DETAIL");
      for (JsonNode r : answer.path("runs")) {
        table.row(
            r.path("runId").asLong(),
            r.path("outcome").asText(),
            Cells.cell(r.path("at")),
            r.path("detail").asText(""));
      }
      table.print(out);
      Cells.more(answer, out);
    }
  }

  @Command(name = "cancel", description = "Cancel a bulk operation: it acts on no further run.")
  static final class Cancel extends ApiCommand {
    @Parameters(index = "0", paramLabel = "BATCH_ID", description = "The batch.")
    long batchId;

    @Override
    Answer request(Api api) {
      return api.post(Api.path("v1", "batches", batchId, "cancel"), Json.object());
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println(
          "batch "
              + answer.path("batchId").asLong()
              + " "
              + answer.path("status").asText()
              + " after "
              + answer.path("done").asLong()
              + " done");
    }
  }
}
