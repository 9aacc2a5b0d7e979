package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.protocol.ScheduleRegistration;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.Schedule;
import dev.pgworkflows.workflows.internal.http.ScheduleRequests;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.link.WorkerTransport;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schedules of a worker's definition, registered with the server when the worker starts ({@code
 * POST /v1/workflows/{name}/schedules}): once, or, while the server is unreachable, again at each
 * turn of the worker's intake until it answers.
 */
final class CodeSchedules {
  private static final Logger log = LoggerFactory.getLogger(CodeSchedules.class);

  private final WorkerTransport transport;
  private final String workflow;
  private final List<Schedule> schedules;
  private volatile boolean pending;

  CodeSchedules(WorkerTransport transport, String workflow, List<Schedule> schedules) {
    this.transport = transport;
    this.workflow = workflow;
    this.schedules = schedules;
    this.pending = !schedules.isEmpty();
  }

  /**
   * The first try, as the worker starts: a refusal (a schedule the server cannot read, a name
   * taken) throws {@link ApiException}; an unreachable server leaves the schedules for {@link
   * #retry}.
   */
  void register() {
    if (!pending) {
      return;
    }
    try {
      send();
    } catch (ServerUnavailableException e) {
      log.warn(
          "workflow {}: could not register its schedules yet, will try again: {}",
          workflow,
          e.getMessage());
    }
  }

  /** Tries again if the first try did not reach the server; a refusal now is logged. */
  void retry() {
    if (!pending) {
      return;
    }
    try {
      send();
      log.info("workflow {}: registered its schedules", workflow);
    } catch (ServerUnavailableException e) {
      // The intake backs off from the unreachable server; the next turn tries again.
    } catch (ApiException e) {
      pending = false;
      log.error("workflow {}: the server refused its schedules: {}", workflow, e.getMessage());
    }
  }

  private void send() {
    transport.registerSchedules(
        workflow,
        new ScheduleRegistration(
            schedules.stream().map(s -> ScheduleRequests.of(s, null, workflow)).toList()));
    pending = false;
  }
}
