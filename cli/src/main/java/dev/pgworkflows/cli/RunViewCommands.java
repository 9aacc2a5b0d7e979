package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * What a run holds besides its journal: its state ({@code pgw runs state}), its streams and their
 * entries ({@code pgw runs streams}), and its continue-as-new chain ({@code pgw runs chain}).
 */
final class RunViewCommands {
  private RunViewCommands() {}

  @Command(name = "state", description = "A run's state: each key, its version and its value.")
  static final class State extends ApiCommand {
    @Mixin RunAddress run;

    @Override
    Answer request(Api api) {
      return api.get(run.path("state"));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("KEY", "VERSION", "VALUE");
      for (Map.Entry<String, JsonNode> e : answer.path("state").properties()) {
        table.row(
            e.getKey(),
            answer.path("versions").path(e.getKey()).asLong(),
            Cells.cell(e.getValue()));
      }
      table.print(out);
    }
  }

  @Command(
      name = "streams",
      description = "A run's streams; with STREAM, its entries from --from (default 0).")
  static final class Streams extends ApiCommand {
    @Mixin RunAddress run;

    @Parameters(index = "2", arity = "0..1", paramLabel = "STREAM", description = "A stream.")
    String stream;

    @Option(names = "--from", paramLabel = "OFFSET", description = "The first entry's offset.")
    Long from;

    @Override
    Answer request(Api api) {
      if (stream == null) {
        return api.get(run.path("streams"));
      }
      var params = Api.params();
      params.put("from", from);
      return api.get(run.path("streams", stream) + Api.query(params));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      if (stream == null) {
        Table table = new Table("STREAM", "ENTRIES", "CLOSED", "CREATED");
        for (JsonNode s : answer.path("streams")) {
          table.row(
              s.path("name").asText(),
              s.path("size").asLong(),
              s.path("closed").asBoolean() ? "closed" : "open",
              Cells.cell(s.path("createdAt")));
        }
        table.print(out);
        return;
      }
      Table table = new Table("OFFSET", "WRITTEN", "VALUE");
      for (JsonNode e : answer.path("entries")) {
        table.row(
            e.path("offset").asLong(),
            Cells.cell(e.path("writtenAt")),
            Cells.cell(e.path("value")));
      }
      table.print(out);
      out.println(
          answer.path("end").asBoolean()
              ? "end of stream"
              : "next: --from " + answer.path("next").asLong());
    }
  }

  @Command(
      name = "chain",
      description = "The runs of a run's continue-as-new chain, first to last.")
  static final class Chain extends ApiCommand {
    @Mixin RunAddress run;

    @Override
    Answer request(Api api) {
      return api.get(run.path("chain"));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("RUN", "STATUS", "STARTED", "COMPLETED", "INPUT");
      for (JsonNode r : answer.path("runs")) {
        table.row(
            r.path("runId").asLong(),
            r.path("status").asText(),
            Cells.cell(r.path("startedAt")),
            Cells.cell(r.path("completedAt")),
            Cells.cell(r.path("input")));
      }
      table.print(out);
    }
  }
}
