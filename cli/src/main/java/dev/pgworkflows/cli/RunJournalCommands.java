package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The run commands that read what a run did and what holds it: steps, signals, blockers. */
final class RunJournalCommands {
  private RunJournalCommands() {}

  @Command(name = "steps", description = "A run's journal, in the order it was written.")
  static final class Steps extends ApiCommand {
    @Mixin RunAddress run;

    @Option(
        names = "--set-aside",
        description = "Also the rows a restart set aside (kept, not replayed).")
    boolean setAside;

    @Override
    Answer request(Api api) {
      return api.get(run.path("steps") + (setAside ? "?setAside=true" : ""));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table =
          setAside
              ? new Table("STEP", "KIND", "ATTEMPTS", "STARTED", "COMPLETED", "SET ASIDE", "OUTPUT")
              : new Table("STEP", "KIND", "ATTEMPTS", "STARTED", "COMPLETED", "OUTPUT");
      for (JsonNode s : answer.path("steps")) {
        String outcome;
        if (s.hasNonNull("error")) {
          outcome = "error: " + Cells.cell(s.get("error"));
        } else if (s.path("timedOut").asBoolean()) {
          outcome = "timed out";
        } else {
          outcome = Cells.cell(s.path("output"));
        }
        Object[] common = {
          s.path("name").asText(),
          s.path("kind").asText(),
          s.path("attempts").asInt(),
          Cells.cell(s.path("startedAt")),
          Cells.cell(s.path("completedAt"))
        };
        if (setAside) {
          table.row(
              common[0],
              common[1],
              common[2],
              common[3],
              common[4],
              s.path("setAside").asBoolean() ? "yes" : "no",
              outcome);
        } else {
          table.row(common[0], common[1], common[2], common[3], common[4], outcome);
        }
      }
      table.print(out);
    }
  }

  @Command(name = "signals", description = "A run's signals, buffered and delivered.")
  static final class Signals extends ApiCommand {
    @Mixin RunAddress run;

    @Override
    Answer request(Api api) {
      return api.get(run.path("signals"));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("SIGNAL", "EVENT", "SENT", "DELIVERED", "TO", "PAYLOAD");
      for (JsonNode s : answer.path("signals")) {
        table.row(
            s.path("signalId").asLong(),
            s.path("event").asText(),
            Cells.cell(s.path("sentAt")),
            Cells.cell(s.path("deliveredAt")),
            Cells.cell(s.path("deliveredTo")),
            Cells.cell(s.path("payload")));
      }
      table.print(out);
    }
  }

  @Command(
      name = "blockers",
      description = "Why a run is not moving: what holds it back, or nothing when it is due.")
  static final class Blockers extends ApiCommand {
    @Mixin RunAddress run;

    @Override
    Answer request(Api api) {
      return api.get(run.path("blockers"));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println("run " + answer.path("runId").asLong() + ": " + answer.path("status").asText());
      Table table = new Table("BLOCKER", "WHY");
      for (JsonNode b : answer.path("blockers")) {
        table.row(b.path("kind").asText(), b.path("text").asText());
      }
      if (table.isEmpty()) {
        out.println("nothing holds it back: it is due and about to be handed out");
      } else {
        table.print(out);
      }
      out.flush();
    }
  }
}
