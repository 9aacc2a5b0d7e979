package dev.pgworkflows.workflows.internal.worker;

import com.fasterxml.jackson.databind.JavaType;
import dev.pgworkflows.workflows.NonDeterministicWorkflowException;
import dev.pgworkflows.workflows.WorkflowVersionMismatch;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.link.Completions;
import dev.pgworkflows.workflows.internal.link.JournalCache;
import dev.pgworkflows.workflows.internal.link.WorkerTransport;
import dev.pgworkflows.workflows.internal.replay.Lease;
import dev.pgworkflows.workflows.internal.replay.Replay;
import dev.pgworkflows.workflows.internal.replay.RunEnvironment;
import dev.pgworkflows.workflows.internal.replay.Suspend;
import dev.pgworkflows.workflows.internal.replay.Task;
import dev.pgworkflows.workflows.internal.replay.UpdateTaskRun;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/** Handles one leased task: replays the body until it finishes, fails or suspends. */
final class TaskRunner<I, O> {
  private static final Logger log = LoggerFactory.getLogger(TaskRunner.class);

  /** The reason of a task that carries the run's updates. */
  private static final String UPDATE = "update";

  private final Definition<I, O> workflow;
  private final WorkerTransport transport;
  private final Completions completions;
  private final RunEnvironment env;
  private final JournalCache journals;

  TaskRunner(
      Definition<I, O> workflow,
      WorkerTransport transport,
      Completions completions,
      RunEnvironment env) {
    this.workflow = workflow;
    this.transport = transport;
    this.completions = completions;
    this.env = env;
    this.journals = new JournalCache(transport, workflow.name());
  }

  void run(Task task) {
    env.counters().tasks.increment();
    MDC.put("runId", Long.toString(task.runId()));
    try {
      if (UPDATE.equals(task.reason())) {
        // The run's pending updates, not its body: answered by the workflow's handlers.
        new UpdateTaskRun(
                workflow.name(), workflow.version(), task, workflow.updates(), transport, env)
            .run();
        return;
      }
      task = journals.fill(task);
      Replay replay = new Replay(workflow.name(), task, lease(task), env);
      if (task.version() != workflow.version()) {
        WorkflowVersionMismatch e =
            new WorkflowVersionMismatch(workflow.name(), workflow.version(), task.version());
        log.error("{}; handing the run back", e.getMessage());
        replay.release(Duration.ofSeconds(5));
        return;
      }
      execute(task, replay);
    } catch (RuntimeException e) {
      // The lease runs out and another attempt follows; nothing is lost.
      log.warn("run {} could not be processed: {}", task.runId(), e.toString());
    } finally {
      MDC.remove("runId");
    }
  }

  /** Hands a task back at once, untouched (used while shutting down). */
  void release(Task task) {
    try {
      lease(task).retryLater(Duration.ZERO, null);
    } catch (RuntimeException | Suspend e) {
      log.debug("could not hand back run {}: {}", task.runId(), e.toString());
    }
  }

  private Lease lease(Task task) {
    return new Lease(transport, completions, workflow.name(), task, env.leaseDuration());
  }

  private void execute(Task task, Replay replay) {
    O output;
    try {
      JavaType inType = Transport.JSON.getTypeFactory().constructType(workflow.inputType());
      I input = Transport.JSON.treeToValue(task.input(), inType);
      output = workflow.body().run(replay, input);
    } catch (Suspend s) {
      log.debug("run {} suspended: {}", task.runId(), s.why());
      return;
    } catch (NonDeterministicWorkflowException e) {
      log.error("run {} failed: {}", task.runId(), e.getMessage());
      countFailed(replay.fail(e));
      return;
    } catch (Exception e) {
      log.info("run {} failed: {}", task.runId(), e.toString());
      countFailed(replay.fail(e));
      return;
    } catch (StackOverflowError | AssertionError e) {
      countFailed(replay.fail(e));
      return;
    }
    String outcome = replay.finish(output);
    if ("ok".equals(outcome)) {
      // Only the server's "ok" ended the run here: stale or not_running means it ended elsewhere.
      env.counters().runsCompleted.increment();
    }
    log.debug("run {} completed ({})", task.runId(), outcome);
  }

  private void countFailed(String outcome) {
    if ("ok".equals(outcome)) {
      env.counters().runsFailed.increment();
    }
  }
}
