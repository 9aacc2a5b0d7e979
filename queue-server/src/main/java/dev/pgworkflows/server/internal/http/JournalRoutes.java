package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.store.TaskStore;
import dev.pgworkflows.protocol.JournalOutcome;
import dev.pgworkflows.protocol.JournalRequest;
import dev.pgworkflows.protocol.StepRecord;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongConsumer;
import java.util.regex.Pattern;

/**
 * Journaling the finished branches of a parallel group: many {@code run} steps of one run in one
 * request and one statement, under the run's lease, which carries on.
 */
public final class JournalRoutes {
  static final int MAX_STEPS = 1000;
  private static final Pattern STEP = Pattern.compile("[a-zA-Z0-9._-]{1,128}");

  private final TaskStore store;
  private final LongConsumer stateChanged;

  /** {@code stateChanged} hears of a run whose journaled steps changed its state. */
  public JournalRoutes(TaskStore store, LongConsumer stateChanged) {
    this.store = store;
    this.stateChanged = stateChanged;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/steps", this::journal);
  }

  private void journal(Context ctx) {
    Params.workflow(ctx);
    long runId = Params.runId(ctx);
    JournalRequest req = JsonBodies.read(ctx, JournalRequest.class);
    long msg = WorkerChecks.messageId(req.messageId());
    long receipt = WorkerChecks.receipt(req.receipt());
    List<StepRecord> steps = steps(req.steps());
    JournalOutcome done = store.journalSteps(runId, msg, receipt, steps);
    if (done.journaled() > 0 && steps.stream().anyMatch(s -> s.state() != null)) {
      stateChanged.accept(runId);
    }
    JsonBodies.respond(ctx, 200, done);
  }

  /** The steps, each a {@code run} step with a name of its own; a 400 naming the first misfit. */
  private static List<StepRecord> steps(List<StepRecord> steps) {
    if (steps == null || steps.isEmpty() || steps.size() > MAX_STEPS) {
      throw ApiException.badRequest("steps", "steps must hold 1 to " + MAX_STEPS + " steps");
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < steps.size(); i++) {
      StepRecord s = steps.get(i);
      String at = "steps[" + i + "]";
      if (s == null) {
        throw ApiException.badRequest(at, at + " must be a step object");
      }
      if (s.name() == null || !STEP.matcher(s.name()).matches()) {
        throw ApiException.badRequest(
            at + ".name",
            at + ".name must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\"");
      }
      if (!"run".equals(s.kind())) {
        throw ApiException.badRequest(
            at + ".kind", at + ".kind must be run: only run steps are journaled here");
      }
      WorkerChecks.error(at + ".error", s.error());
      WorkerChecks.state(at + ".state", s.state());
      if (!names.add(s.name())) {
        throw ApiException.badRequest(at + ".name", "step \"" + s.name() + "\" is in steps twice");
      }
    }
    return steps;
  }
}
