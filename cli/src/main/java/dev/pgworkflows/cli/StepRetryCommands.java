package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * A run's retrying step (the step whose attempt failed and will be tried again) and an operator's
 * controls over its retries: show, pause, resume, reset the attempts, set options for the run.
 */
final class StepRetryCommands {
  private StepRetryCommands() {}

  /** A command on a run's retrying step, addressed as {@code WORKFLOW RUN_ID STEP}. */
  abstract static class OnStep extends RunsCommand.RunView {
    @Parameters(index = "2", paramLabel = "STEP", description = "The retrying step.")
    String step;

    String stepPath(String action) {
      return run.path("steps", step, action);
    }
  }

  @Command(
      name = "retrying",
      description =
          "The run's retrying step: the attempt that failed, its error, and where its retries"
              + " stand (backoff, running, paused or run_paused).")
  static final class Show extends OnStep {
    @Override
    Answer request(Api api) {
      return api.get(stepPath("retry"));
    }
  }

  @Command(
      name = "pause-step",
      description =
          "Pause a retrying step's retries: no attempt of it starts until they are resumed.")
  static final class Pause extends OnStep {
    @Override
    Answer request(Api api) {
      return api.post(stepPath("pause"), null);
    }
  }

  @Command(name = "resume-step", description = "Resume a step's paused retries: due now.")
  static final class Resume extends OnStep {
    @Override
    Answer request(Api api) {
      return api.post(stepPath("resume"), null);
    }
  }

  @Command(
      name = "reset-step",
      description =
          "Reset the attempts counted for a retrying step: its next attempt, due now, is attempt"
              + " 1.")
  static final class Reset extends OnStep {
    @Override
    Answer request(Api api) {
      return api.post(stepPath("reset"), null);
    }
  }

  @Command(
      name = "step-options",
      description =
          "Set a retrying step's retry options for this run, in place of its code's from its next"
              + " attempt; with none given, clear them.")
  static final class Options extends OnStep {
    @Option(names = "--attempts", paramLabel = "N", description = "Attempts in all (1-1000).")
    Integer attempts;

    @Option(names = "--backoff", paramLabel = "KIND", description = "fixed, linear or exponential.")
    String backoff;

    @Option(names = "--base-ms", paramLabel = "MS", description = "The backoff's base.")
    Long baseMs;

    @Option(names = "--max-ms", paramLabel = "MS", description = "The longest backoff.")
    Long maxMs;

    @Option(names = "--timeout-ms", paramLabel = "MS", description = "Each attempt's limit.")
    Long timeoutMs;

    @Override
    Answer request(Api api) {
      ObjectNode body = Json.object();
      if (attempts != null) {
        body.put("attempts", attempts);
      }
      if (backoff != null) {
        body.put("backoff", backoff);
      }
      if (baseMs != null) {
        body.put("baseMs", baseMs);
      }
      if (maxMs != null) {
        body.put("maxMs", maxMs);
      }
      if (timeoutMs != null) {
        body.put("timeoutMs", timeoutMs);
      }
      return api.put(stepPath("options"), body);
    }
  }
}
