package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.protocol.UpdateAnswers;
import dev.pgworkflows.protocol.UpdateTask;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.link.WorkerTransport;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task of reason {@code update}: takes the run's pending updates, runs each one's validator and
 * handler (the version's own for its name; none: refused), and answers them all, which ends the
 * task. The run's body does not run. Each update is a span {@code workflow.update} under the run's.
 * A server out of reach is tried again while the lease lasts; then the task is handed out again and
 * its updates, answered by no one yet, are handled afresh.
 */
public final class UpdateTaskRun {
  private static final Logger log = LoggerFactory.getLogger(UpdateTaskRun.class);

  private final String workflow;
  private final int version;
  private final Task task;
  private final UpdateHandlers handlers;
  private final WorkerTransport transport;
  private final StepTracing tracing;

  public UpdateTaskRun(
      String workflow,
      int version,
      Task task,
      UpdateHandlers handlers,
      WorkerTransport transport,
      RunEnvironment env) {
    this.workflow = workflow;
    this.version = version;
    this.task = task;
    this.handlers = handlers;
    this.transport = transport;
    this.tracing = new StepTracing(env.tracer(), workflow, task);
  }

  /**
   * Handles the task; its outcome ({@code ok}, {@code stale}, {@code not_running}, {@code lost}).
   */
  public String run() {
    UpdateTask taken;
    try {
      taken =
          retried(
              () ->
                  transport.takeUpdates(
                      workflow,
                      task.runId(),
                      new UpdateTask.Request(task.messageId(), task.receipt())));
    } catch (ApiException e) {
      if (e.status() == 409) {
        return "lost";
      }
      throw e;
    }
    Map<String, JsonNode> state = new HashMap<>();
    if (taken.state() != null) {
      taken.state().properties().forEach(e -> state.put(e.getKey(), e.getValue()));
    }
    List<UpdateAnswers.Answer> answers = new ArrayList<>();
    for (UpdateTask.Pending p : taken.updates()) {
      answers.add(answer(p, state));
    }
    String outcome =
        retried(
                () ->
                    transport.answerUpdates(
                        workflow,
                        task.runId(),
                        new UpdateAnswers(task.messageId(), task.receipt(), answers)))
            .outcome();
    log.debug("run {}: {} updates answered ({})", task.runId(), answers.size(), outcome);
    return outcome;
  }

  private UpdateAnswers.Answer answer(UpdateTask.Pending p, Map<String, JsonNode> state) {
    Span span = tracing.update(p.update(), p.updateId());
    try {
      UpdateAnswers.Answer a = handle(p, state);
      span.setAttribute("update.outcome", a.status());
      if (!"completed".equals(a.status())) {
        span.setStatus(StatusCode.ERROR, String.valueOf(a.error().path("message").asText()));
      }
      return a;
    } finally {
      span.end();
    }
  }

  private UpdateAnswers.Answer handle(UpdateTask.Pending p, Map<String, JsonNode> state) {
    UpdateHandlers.Entry h = handlers.get(p.update());
    if (h == null) {
      return refused(
          p,
          "UnknownUpdate",
          "version "
              + version
              + " of workflow "
              + workflow
              + " has no handler for update "
              + p.update());
    }
    Object input;
    try {
      input = StepValues.convert(p.input(), h.inputType());
    } catch (IllegalStateException e) {
      return refused(
          p,
          "BadInput",
          "the input does not read as "
              + h.inputType().getTypeName()
              + ": "
              + e.getCause().getMessage());
    }
    UpdateScope scope = new UpdateScope(workflow, task.runId(), p.update(), state);
    if (h.validator() != null) {
      try {
        h.validator().validate(scope, input);
      } catch (Exception | AssertionError e) {
        return refused(p, e.getClass().getName(), String.valueOf(e.getMessage()));
      }
    }
    scope.handling();
    JsonNode output;
    try {
      output = Transport.JSON.valueToTree(h.handler().handle(scope, input));
    } catch (Exception | StackOverflowError | AssertionError e) {
      return new UpdateAnswers.Answer(
          p.updateId(), "failed", null, StepErrors.json(e, null), null, null);
    }
    scope.commit();
    return new UpdateAnswers.Answer(
        p.updateId(), "completed", output, null, scope.changes(), scope.signals());
  }

  private static UpdateAnswers.Answer refused(UpdateTask.Pending p, String type, String message) {
    ObjectNode e = Transport.JSON.createObjectNode().put("type", type).put("message", message);
    return new UpdateAnswers.Answer(p.updateId(), "refused", null, e, null, null);
  }

  /** Tries {@code call} again while the server is out of reach, for up to about 30 seconds. */
  private static <T> T retried(Supplier<T> call) {
    long delay = 100;
    for (int i = 0; ; i++) {
      try {
        return call.get();
      } catch (ServerUnavailableException e) {
        if (i == 8) {
          throw e;
        }
        try {
          Thread.sleep(delay);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
        delay = Math.min(delay * 2, 5_000);
      }
    }
  }
}
