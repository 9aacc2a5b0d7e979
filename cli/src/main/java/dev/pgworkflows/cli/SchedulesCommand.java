package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pgw schedules}: every schedule with its next tick, overlap policy and failures; {@code pgw
 * schedules backfill NAME --from --to} runs a past range of its ticks now.
 */
@Command(
    name = "schedules",
    description = "Every schedule with its next tick (also: schedules list; schedules backfill).",
    subcommands = {SchedulesCommand.List.class, SchedulesCommand.Backfill.class})
final class SchedulesCommand extends ApiCommand {
  @Override
  Answer request(Api api) {
    return api.get("/v1/schedules");
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    Table table =
        new Table("NAME", "WORKFLOW", "CRON", "ZONE", "NEXT TICK", "OVERLAP", "FAILURES", "STATE");
    for (JsonNode s : answer.path("schedules")) {
      int failures = s.path("failuresInRow").asInt();
      table.row(
          s.path("name").asText(),
          s.path("workflow").asText(),
          s.path("cron").asText(),
          s.path("zone").asText(),
          Cells.cell(s.path("nextTick")),
          s.path("overlap").asText("allow_all")
              + (s.path("buffered").asInt() > 0
                  ? " (" + s.get("buffered").asInt() + " buffered)"
                  : ""),
          s.hasNonNull("pauseAfterFailures")
              ? failures + " of " + s.get("pauseAfterFailures").asInt()
              : String.valueOf(failures),
          s.path("paused").asBoolean() ? "paused" : "active");
    }
    table.print(out);
  }

  /** {@code pgw schedules list}: the same as {@code pgw schedules}. */
  @Command(name = "list", description = "Every schedule with its next tick.")
  static final class List extends ApiCommand {
    private final SchedulesCommand all = new SchedulesCommand();

    @Override
    Answer request(Api api) {
      return all.request(api);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      all.show(answer, out);
    }
  }

  /** {@code pgw schedules backfill NAME --from T --to T}. */
  @Command(
      name = "backfill",
      description =
          "Run the schedule's ticks from --from (inclusive) to --to (exclusive) now, as if at"
              + " their ticks, under its overlap policy (at most 1000 ticks).")
  static final class Backfill extends ApiCommand {
    @Parameters(index = "0", paramLabel = "NAME", description = "The schedule's name.")
    String name;

    @Option(
        names = "--from",
        required = true,
        paramLabel = "TIME",
        description = "The first tick's earliest time, RFC 3339 (2026-11-01T00:00:00Z).")
    String from;

    @Option(
        names = "--to",
        required = true,
        paramLabel = "TIME",
        description = "The end of the range, RFC 3339; a tick at it is not run.")
    String to;

    @Override
    Answer request(Api api) {
      ObjectNode body = Json.object();
      body.put("from", from);
      body.put("to", to);
      return api.post(Api.path("v1", "schedules", name, "backfill"), body);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("TICK", "OUTCOME", "RUN");
      for (JsonNode t : answer.path("ticks")) {
        table.row(
            t.path("tick").asText(),
            t.path("outcome").asText()
                + (t.path("created").isBoolean() && !t.get("created").asBoolean()
                    ? " (ran before)"
                    : ""),
            t.hasNonNull("runId") ? t.get("runId").asText() : "-");
      }
      table.print(out);
    }
  }
}
