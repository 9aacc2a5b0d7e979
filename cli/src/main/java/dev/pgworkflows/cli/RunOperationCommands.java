package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The run commands that change a run: signal, cancel, pause, resume, restart, fork. */
final class RunOperationCommands {
  private RunOperationCommands() {}

  @Command(name = "signal", description = "Send a run a signal: an event with a payload.")
  static final class Signal extends ApiCommand {
    @Mixin RunAddress run;

    @Parameters(index = "2", paramLabel = "EVENT", description = "The event's name.")
    String event;

    @Option(
        names = "--data",
        paramLabel = "JSON",
        converter = JsonArgument.class,
        description = "The payload (default {}).")
    JsonNode data;

    @Option(
        names = "--key",
        paramLabel = "IDEMPOTENCY_KEY",
        description = "A repeat of this key for the run stores nothing.")
    String key;

    @Override
    Answer request(Api api) {
      JsonNode body = data != null ? data : Json.object();
      Map<String, String> headers = key == null ? Map.of() : Map.of("Idempotency-Key", key);
      return api.send("POST", run.path("signals", event), body, headers);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      String outcome = answer.path("outcome").asText();
      long id = answer.path("signalId").asLong();
      out.println(
          "duplicate".equals(outcome)
              ? "duplicate of signal " + id + ": nothing stored"
              : "signal " + id + ": " + outcome);
    }
  }

  @Command(name = "cancel", description = "Cancel a run.")
  static final class Cancel extends ApiCommand {
    @Mixin RunAddress run;

    @Override
    Answer request(Api api) {
      return api.delete(run.path());
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      String id = "run " + answer.path("runId").asLong();
      out.println(
          answer.path("cancelled").asBoolean()
              ? id + ": cancelled"
              : id + " had ended already: " + answer.path("status").asText());
    }
  }

  @Command(name = "pause", description = "Hand out none of the run's tasks until it is resumed.")
  static final class Pause extends RunsCommand.RunView {
    @Override
    Answer request(Api api) {
      return api.post(run.path("pause"), null);
    }
  }

  @Command(name = "resume", description = "Hand out the run's tasks again.")
  static final class Resume extends RunsCommand.RunView {
    @Override
    Answer request(Api api) {
      return api.post(run.path("resume"), null);
    }
  }

  @Command(
      name = "restart",
      description =
          "Run a failed, cancelled or timed-out run again from a step: its journal rows from"
              + " that step on are set aside (kept, not replayed).")
  static final class Restart extends RunsCommand.RunView {
    @Option(
        names = "--from",
        required = true,
        paramLabel = "STEP",
        description = "The step to run again.")
    String fromStep;

    @Override
    Answer request(Api api) {
      return api.post(run.path("restart"), Json.object().put("fromStep", fromStep));
    }
  }

  @Command(
      name = "fork",
      description =
          "Start a new run with the run's journal up to a step, which it runs again; the run"
              + " itself is left as it is.")
  static final class Fork extends RunsCommand.RunView {
    @Option(
        names = "--from",
        required = true,
        paramLabel = "STEP",
        description = "The step the new run runs again.")
    String fromStep;

    @Option(
        names = "--input",
        paramLabel = "JSON",
        converter = JsonArgument.class,
        description = "The new run's input (default: the run's).")
    JsonNode input;

    @Override
    Answer request(Api api) {
      ObjectNode body = Json.object().put("fromStep", fromStep);
      if (input != null) {
        body.set("input", input);
      }
      return api.post(run.path("fork"), body);
    }
  }
}
