package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code pgw attributes}: the search attributes runs may carry; {@code pgw attributes define NAME
 * TYPE} defines one.
 */
@Command(
    name = "attributes",
    description = "The search attributes runs may carry (also: attributes define NAME TYPE).",
    subcommands = {AttributesCommand.Define.class})
final class AttributesCommand extends ApiCommand {
  @Override
  Answer request(Api api) {
    return api.get("/v1/search-attributes");
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    Table table = new Table("NAME", "TYPE", "DEFINED");
    for (JsonNode a : answer.path("attributes")) {
      table.row(a.path("name").asText(), a.path("type").asText(), Cells.cell(a.path("createdAt")));
    }
    table.print(out);
  }

  @Command(name = "define", description = "Define a search attribute runs may carry.")
  static final class Define extends ApiCommand {
    @Parameters(index = "0", paramLabel = "NAME", description = "The attribute's name.")
    String name;

    @Parameters(
        index = "1",
        paramLabel = "TYPE",
        description = "text, keyword_list, number, boolean or time.")
    String type;

    @Override
    Answer request(Api api) {
      ObjectNode body = Json.object();
      body.put("type", type);
      return api.put(Api.path("v1", "search-attributes", name), body);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println(
          answer.path("name").asText()
              + " ("
              + answer.path("type").asText()
              + (answer.path("created").asBoolean() ? "): defined" : "): was defined already"));
    }
  }
}
