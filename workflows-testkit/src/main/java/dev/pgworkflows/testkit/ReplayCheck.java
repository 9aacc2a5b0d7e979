package dev.pgworkflows.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.internal.replay.ReplayOnly;
import dev.pgworkflows.workflows.internal.replay.Task;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Checks new workflow code against the journals of runs in flight before it is deployed: each run
 * exported with {@code pgw journals export} is replayed through the code as a worker would replay
 * it, without a server and without running a step (a journaled step returns its recorded output; a
 * journaled sleep, wait, child, parallel group or deterministic value replays from its row).
 *
 * <pre>{@code
 * ReplayCheck.of(OnboardUser.workflow(Duration.ofMinutes(5)))
 *     .against(Path.of("src/test/resources/replay/onboard-user"))
 *     .assertCompatible();
 * }</pre>
 *
 * <p>A run the code would fail with {@code NonDeterministicWorkflowException} is reported with
 * where the code and the journal part ways. A run whose replay reaches the end of its journal (the
 * code would do new work next), returns, or fails as the journal makes it fail, is compatible. A
 * run waiting in a step must reach that step, as a wait, at its journal's end. Runs of another
 * workflow or another version are skipped: a worker of this version never receives them.
 */
public final class ReplayCheck {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Workflow<?, ?> workflow;

  private ReplayCheck(Workflow<?, ?> workflow) {
    this.workflow = workflow;
  }

  /** A check of {@code workflow}'s code (its name, version, input type and body). */
  public static ReplayCheck of(Workflow<?, ?> workflow) {
    if (workflow == null) {
      throw new IllegalArgumentException("workflow must not be null");
    }
    return new ReplayCheck(workflow);
  }

  /**
   * Replays the exported runs in {@code path}: one file, or every {@code .json} file under a
   * directory (none is fine: no run was in flight).
   */
  public ReplayReport against(Path path) {
    if (path == null || !Files.exists(path)) {
      throw new IllegalArgumentException("no exported journals at " + path);
    }
    if (!Files.isDirectory(path)) {
      return against(List.of(path));
    }
    try (Stream<Path> files = Files.walk(path)) {
      return against(
          files
              .filter(f -> Files.isRegularFile(f) && f.getFileName().toString().endsWith(".json"))
              .sorted()
              .toList());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + path, e);
    }
  }

  /** Replays the exported runs in these files. */
  public ReplayReport against(List<Path> files) {
    if (files == null) {
      throw new IllegalArgumentException("files must not be null");
    }
    List<Long> checked = new ArrayList<>();
    List<ReplayReport.Skipped> skipped = new ArrayList<>();
    List<ReplayFailure> failures = new ArrayList<>();
    for (Path file : files) {
      ExportedRun run = ExportedRun.read(file, JSON);
      if (!run.workflow().equals(workflow.name())) {
        skipped.add(new ReplayReport.Skipped(run.runId(), file, "a run of " + run.workflow()));
        continue;
      }
      if (run.version() != workflow.version()) {
        skipped.add(
            new ReplayReport.Skipped(
                run.runId(),
                file,
                "version "
                    + run.version()
                    + ": workers of version "
                    + workflow.version()
                    + " do not receive it"));
        continue;
      }
      checked.add(run.runId());
      ReplayOnly.Outcome outcome = replay(workflow, run);
      switch (outcome.ending()) {
        case NON_DETERMINISTIC ->
            failures.add(
                new ReplayFailure(
                    run.runId(), file, outcome.position(), outcome.error().getMessage()));
        case INPUT_UNREADABLE ->
            failures.add(
                new ReplayFailure(
                    run.runId(),
                    file,
                    0,
                    "its input does not read as "
                        + workflow.inputType().getTypeName()
                        + ": "
                        + outcome.error().getMessage()));
        case JOURNAL_END, RETURNED, FAILED -> {
          // compatible: the code carries the run on from where its journal ends
        }
      }
    }
    return new ReplayReport(workflow.name(), checked, skipped, failures);
  }

  private static <I, O> ReplayOnly.Outcome replay(Workflow<I, O> workflow, ExportedRun run) {
    // A task as a worker would lease it; no lease is taken, so its message and receipt are none.
    Task task =
        new Task(
            run.runId(),
            0,
            null,
            1,
            run.version(),
            "resume",
            run.input(),
            run.journal(),
            null,
            null);
    return ReplayOnly.replay(
        workflow.name(), workflow.inputType(), workflow.body(), task, run.waitingIn());
  }

  /** One run as {@code pgw journals export} wrote it. */
  private record ExportedRun(
      Path file,
      String workflow,
      long runId,
      int version,
      JsonNode input,
      String waitingIn,
      List<Task.Entry> journal) {

    static ExportedRun read(Path file, ObjectMapper json) {
      JsonNode n;
      try {
        n = json.readTree(file.toFile());
      } catch (IOException e) {
        throw new IllegalArgumentException(
            file + " is not an exported journal: " + e.getMessage(), e);
      }
      if (n == null || !n.isObject()) {
        throw new IllegalArgumentException(file + " is not an exported journal: not a JSON object");
      }
      String workflow = text(file, n, "workflow");
      long runId = number(file, n, "runId");
      int version = (int) number(file, n, "version");
      JsonNode steps = n.get("steps");
      if (steps == null || !steps.isArray()) {
        throw new IllegalArgumentException(file + " is not an exported journal: no steps array");
      }
      List<Task.Entry> journal = new ArrayList<>(steps.size());
      for (JsonNode s : steps) {
        journal.add(
            new Task.Entry(
                text(file, s, "name"),
                text(file, s, "kind"),
                s.get("output"),
                s.get("error"),
                s.path("timedOut").asBoolean()));
      }
      JsonNode waiting = n.path("waitingFor").path("step");
      return new ExportedRun(
          file,
          workflow,
          runId,
          version,
          n.get("input"),
          waiting.isTextual() ? waiting.asText() : null,
          journal);
    }

    private static String text(Path file, JsonNode n, String field) {
      JsonNode v = n.get(field);
      if (v == null || !v.isTextual()) {
        throw new IllegalArgumentException(
            file + " is not an exported journal: \"" + field + "\" is not a string");
      }
      return v.asText();
    }

    private static long number(Path file, JsonNode n, String field) {
      JsonNode v = n.get(field);
      if (v == null || !v.isIntegralNumber()) {
        throw new IllegalArgumentException(
            file + " is not an exported journal: \"" + field + "\" is not a number");
      }
      return v.asLong();
    }
  }
}
