package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code pgw workers}: the workers the servers have seen lately. */
@Command(
    name = "workers",
    description = "The workers seen lately, with their slots, versions and labels.")
final class WorkersCommand extends ApiCommand {
  @Option(names = "--workflow", paramLabel = "WORKFLOW", description = "Only this workflow's.")
  String workflow;

  @Override
  Answer request(Api api) {
    var params = Api.params();
    params.put("workflow", workflow);
    return api.get("/v1/workers" + Api.query(params));
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    Table table =
        new Table(
            "ID", "WORKFLOW", "HOST", "VERSIONS", "SLOTS", "MODE", "LABELS", "SERVER", "LAST SEEN");
    for (JsonNode w : answer.path("workers")) {
      StringBuilder versions = new StringBuilder();
      for (JsonNode v : w.path("versions")) {
        versions.append(versions.length() == 0 ? "" : ",").append(v.asText());
      }
      table.row(
          Cells.cell(w.path("id")),
          Cells.cell(w.path("workflow")),
          Cells.cell(w.path("host")),
          versions.length() == 0 ? "-" : versions,
          Cells.cell(w.path("slots")),
          Cells.cell(w.path("mode")),
          RoutingCommand.labels(w.path("labels")),
          Cells.cell(w.path("server")),
          Cells.cell(w.path("lastSeen")));
    }
    table.print(out);
  }
}
