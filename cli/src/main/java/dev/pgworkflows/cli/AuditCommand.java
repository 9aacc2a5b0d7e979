package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code pgw audit}: the operator actions the servers recorded, newest first. */
@Command(name = "audit", description = "The audit trail of operator actions, newest first.")
final class AuditCommand extends ApiCommand {
  @Option(
      names = "--action",
      paramLabel = "ACTION",
      description = "Only this action, e.g. run.cancel.")
  String action;

  @Option(names = "--after", paramLabel = "CURSOR", description = "The page after this cursor.")
  String after;

  @Option(names = "--limit", paramLabel = "N", description = "Entries per page (default 100).")
  Integer limit;

  @Override
  Answer request(Api api) {
    var params = Api.params();
    params.put("action", action);
    params.put("cursor", after);
    params.put("limit", limit);
    return api.get("/v1/audit" + Api.query(params));
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    Table table = new Table("AT", "ACTOR", "ACTION", "TARGET", "DETAILS");
    for (JsonNode e : answer.path("entries")) {
      table.row(
          Cells.cell(e.path("at")),
          e.path("actor").asText(),
          e.path("action").asText(),
          e.path("target").asText(""),
          Cells.cell(e.path("details")));
    }
    table.print(out);
    Cells.more(answer, out);
  }
}
