package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Something a worker sets on the server from its definition when it starts (its schedules, its
 * concurrency limit, its cancel-on rules): once, or, while the server is unreachable, again at each
 * turn of the worker's intake until it answers. A definition that declares nothing sends nothing.
 */
final class CodeRegistration {
  private static final Logger log = LoggerFactory.getLogger(CodeRegistration.class);

  private final String workflow;
  private final String what;
  private final Runnable send;
  private volatile boolean pending;

  /**
   * {@code what} names it in the log ("its schedules"); {@code send} sets it, throwing {@link
   * ServerUnavailableException} or {@link ApiException}; {@code declared} false sends nothing.
   */
  CodeRegistration(String workflow, String what, boolean declared, Runnable send) {
    this.workflow = workflow;
    this.what = what;
    this.send = send;
    this.pending = declared;
  }

  /**
   * The first try, as the worker starts: a refusal (a token without scope {@code worker}, a value
   * the server will not take) throws {@link ApiException}; an unreachable server leaves it for
   * {@link #retry}.
   */
  void register() {
    if (!pending) {
      return;
    }
    try {
      send();
    } catch (ServerUnavailableException e) {
      log.warn(
          "workflow {}: could not set {} yet, will try again: {}", workflow, what, e.getMessage());
    }
  }

  /** Tries again if the first try did not reach the server; a refusal now is logged. */
  void retry() {
    if (!pending) {
      return;
    }
    try {
      send();
      log.info("workflow {}: set {}", workflow, what);
    } catch (ServerUnavailableException e) {
      // The intake backs off from the unreachable server; the next turn tries again.
    } catch (ApiException e) {
      pending = false;
      log.error("workflow {}: the server refused {}: {}", workflow, what, e.getMessage());
    }
  }

  private void send() {
    send.run();
    pending = false;
  }
}
