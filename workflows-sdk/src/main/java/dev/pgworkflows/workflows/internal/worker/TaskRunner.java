package dev.pgworkflows.workflows.internal.worker;

import com.fasterxml.jackson.databind.JavaType;
import dev.pgworkflows.workflows.NonDeterministicWorkflowException;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowVersionMismatch;
import dev.pgworkflows.workflows.internal.http.Completions;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.replay.Lease;
import dev.pgworkflows.workflows.internal.replay.Replay;
import dev.pgworkflows.workflows.internal.replay.Suspend;
import dev.pgworkflows.workflows.internal.replay.Task;
import io.opentelemetry.api.trace.Tracer;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/** Handles one leased task: replays the body until it finishes, fails or suspends. */
final class TaskRunner<I, O> {
  private static final Logger log = LoggerFactory.getLogger(TaskRunner.class);

  private final Workflow<I, O> workflow;
  private final Transport transport;
  private final Completions completions;
  private final ScheduledExecutorService heartbeats;
  private final Duration leaseDuration;
  private final BooleanSupplier stopping;
  private final Tracer tracer;

  TaskRunner(
      Workflow<I, O> workflow,
      Transport transport,
      Completions completions,
      ScheduledExecutorService heartbeats,
      Duration leaseDuration,
      BooleanSupplier stopping,
      Tracer tracer) {
    this.workflow = workflow;
    this.tracer = tracer;
    this.transport = transport;
    this.completions = completions;
    this.heartbeats = heartbeats;
    this.leaseDuration = leaseDuration;
    this.stopping = stopping;
  }

  void run(Task task) {
    MDC.put("runId", Long.toString(task.runId()));
    try {
      Lease lease = new Lease(transport, completions, workflow.name(), task, leaseDuration);
      Replay replay =
          new Replay(workflow.name(), task, lease, heartbeats, leaseDuration, stopping, tracer);
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
      new Lease(transport, completions, workflow.name(), task, leaseDuration)
          .retryLater(Duration.ZERO, null);
    } catch (RuntimeException | Suspend e) {
      log.debug("could not hand back run {}: {}", task.runId(), e.toString());
    }
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
      replay.fail(e);
      return;
    } catch (Exception e) {
      log.info("run {} failed: {}", task.runId(), e.toString());
      replay.fail(e);
      return;
    } catch (StackOverflowError | AssertionError e) {
      replay.fail(e);
      return;
    }
    String outcome = replay.finish(output);
    log.debug("run {} completed ({})", task.runId(), outcome);
  }
}
