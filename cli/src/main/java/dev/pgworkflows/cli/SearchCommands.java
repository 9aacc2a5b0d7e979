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
 * Finding runs of every workflow by a query ({@code pgw runs search}, {@code pgw runs count}) and a
 * run's search attributes ({@code pgw runs attributes}).
 */
final class SearchCommands {
  private SearchCommands() {}

  @Command(
      name = "search",
      description =
          "Runs of every workflow a query selects, newest first, e.g. \"status = 'failed' AND"
              + " customer = 'acme'\".")
  static final class Search extends ApiCommand {
    @Parameters(index = "0", paramLabel = "QUERY", description = "The query.")
    String query;

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
      params.put("query", query);
      params.put("cursor", after);
      params.put("limit", limit);
      return api.get("/v1/runs" + Api.query(params));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("WORKFLOW", "RUN", "STATUS", "STARTED", "COMPLETED");
      for (JsonNode r : answer.path("runs")) {
        table.row(
            r.path("workflow").asText(),
            r.path("runId").asLong(),
            r.path("status").asText(),
            Cells.cell(r.path("startedAt")),
            Cells.cell(r.path("completedAt")));
      }
      table.print(out);
      Cells.more(answer, out);
    }
  }

  @Command(name = "count", description = "How many runs of every workflow a query selects.")
  static final class Count extends ApiCommand {
    @Parameters(index = "0", paramLabel = "QUERY", description = "The query.")
    String query;

    @Override
    Answer request(Api api) {
      var params = Api.params();
      params.put("query", query);
      return api.get("/v1/runs/count" + Api.query(params));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println(answer.path("count").asLong());
    }
  }

  @Command(
      name = "attributes",
      description = "A run's search attributes; with --set, sets some of them first.")
  static final class Attributes extends ApiCommand {
    @Mixin RunAddress run;

    @Option(
        names = "--set",
        paramLabel = "NAME=JSON",
        description =
            "Set this attribute (repeatable): a JSON value, or text as it is; null removes it.")
    Map<String, String> set;

    @Override
    Answer request(Api api) {
      if (set == null) {
        return api.get(run.path("attributes"));
      }
      ObjectNode values = Json.object();
      set.forEach((name, value) -> values.set(name, Json.parse(value)));
      ObjectNode body = Json.object();
      body.set("attributes", values);
      return api.put(run.path("attributes"), body);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Cells.fields(answer.path("attributes"), out);
    }
  }
}
