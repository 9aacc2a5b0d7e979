package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code pgw journals}: runs' journals as files, for checks that need no server. */
@Command(
    name = "journals",
    description = "Runs' journals as files, for checks that need no server.",
    synopsisSubcommandLabel = "COMMAND",
    subcommands = {JournalsCommand.Export.class})
final class JournalsCommand {
  private JournalsCommand() {}

  @Command(
      name = "export",
      description =
          "Write each run of a workflow in a status to DIR/WORKFLOW-RUN_ID.json: its version,"
              + " input, status, the step it waits in and its journal, what a replay check"
              + " (ReplayCheck in workflows-testkit) needs. With --json it prints"
              + " {workflow, status, exported, files}.")
  static final class Export implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(
        names = "--workflow",
        required = true,
        paramLabel = "NAME",
        description = "The workflow.")
    String workflow;

    @Option(
        names = "--status",
        paramLabel = "STATUS",
        defaultValue = "running",
        completionCandidates = RunStatuses.class,
        description = "The runs with this status: ${COMPLETION-CANDIDATES} (default running).")
    String status;

    @Option(
        names = "--out",
        paramLabel = "DIR",
        defaultValue = ".",
        description = "Where the files go, made when missing (default: this directory).")
    Path out;

    @Option(
        names = "--page-size",
        paramLabel = "N",
        defaultValue = "100",
        description = "Runs asked for per request (default 100).")
    int pageSize;

    @Override
    public Integer call() {
      if (Files.exists(out) && !Files.isDirectory(out)) {
        throw new ParameterException(spec.commandLine(), "--out " + out + " is not a directory");
      }
      Pgw pgw = (Pgw) spec.root().userObject();
      Api api = pgw.api();
      ArrayNode files = Json.MAPPER.createArrayNode();
      String cursor = null;
      do {
        var params = Api.params();
        params.put("status", status);
        params.put("cursor", cursor);
        params.put("limit", pageSize);
        // The first page comes before any file is written: a status the server refuses
        // leaves the directory as it was.
        JsonNode page =
            api.get(Api.path("v1", "workflows", workflow, "runs") + Api.query(params)).json();
        for (JsonNode listed : page.path("runs")) {
          Path file = export(api, listed.path("runId").asLong());
          if (file != null) {
            files.add(file.toString());
          }
        }
        cursor = page.hasNonNull("nextCursor") ? page.get("nextCursor").asText() : null;
      } while (cursor != null);
      PrintWriter o = spec.commandLine().getOut();
      if (pgw.json()) {
        ObjectNode summary = Json.object();
        summary.put("workflow", workflow);
        summary.put("status", status);
        summary.put("exported", files.size());
        summary.set("files", files);
        o.println(Json.compact(summary));
      } else {
        o.println(
            "exported "
                + files.size()
                + (files.size() == 1 ? " run" : " runs")
                + " of "
                + workflow
                + " ("
                + status
                + ") to "
                + out);
      }
      o.flush();
      return ExitCodes.OK;
    }

    /** Writes one run's file; null when the run is gone meanwhile (its retention ended). */
    private Path export(Api api, long runId) {
      JsonNode run;
      JsonNode steps;
      try {
        run = api.get(Api.path("v1", "workflows", workflow, "runs", runId)).json();
        steps = api.get(Api.path("v1", "workflows", workflow, "runs", runId, "steps")).json();
      } catch (ServerAnswered e) {
        if (e.status() == 404) {
          return null;
        }
        throw e;
      }
      ObjectNode file = Json.object();
      file.put("workflow", workflow);
      file.put("runId", runId);
      file.set("version", run.get("version"));
      file.set("status", run.get("status"));
      file.set("input", run.get("input"));
      if (run.hasNonNull("waitingFor")) {
        file.set("waitingFor", run.get("waitingFor"));
      }
      file.set("steps", steps.path("steps"));
      Path path = out.resolve(workflow + "-" + runId + ".json");
      try {
        Files.createDirectories(out);
        Files.writeString(
            path, Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(file) + "\n");
      } catch (IOException e) {
        // Where the files go is the caller's to fix: a usage error, as a bad --out is.
        throw new ParameterException(
            spec.commandLine(), "--out: cannot write " + path + ": " + e, e);
      }
      return path;
    }
  }
}
