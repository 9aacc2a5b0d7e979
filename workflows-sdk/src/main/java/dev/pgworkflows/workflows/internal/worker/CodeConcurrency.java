package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.protocol.ConcurrencyLimit;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.link.WorkerTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The concurrency limit per key of a worker's definition, set on the server when the worker starts
 * ({@code PUT /v1/workflows/{name}/code-concurrency}, scope {@code worker}): once, or, while the
 * server is unreachable, again at each turn of the worker's intake until it answers.
 */
final class CodeConcurrency {
  private static final Logger log = LoggerFactory.getLogger(CodeConcurrency.class);

  private final WorkerTransport transport;
  private final String workflow;
  private final Integer limit;
  private volatile boolean pending;

  CodeConcurrency(WorkerTransport transport, String workflow, Integer limit) {
    this.transport = transport;
    this.workflow = workflow;
    this.limit = limit;
    this.pending = limit != null;
  }

  /**
   * The first try, as the worker starts: a refusal (a token without scope {@code worker}, say)
   * throws {@link ApiException}; an unreachable server leaves the limit for {@link #retry}.
   */
  void register() {
    if (!pending) {
      return;
    }
    try {
      send();
    } catch (ServerUnavailableException e) {
      log.warn(
          "workflow {}: could not set its concurrency limit yet, will try again: {}",
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
      log.info("workflow {}: set its concurrency limit to {}", workflow, limit);
    } catch (ServerUnavailableException e) {
      // The intake backs off from the unreachable server; the next turn tries again.
    } catch (ApiException e) {
      pending = false;
      log.error(
          "workflow {}: the server refused its concurrency limit: {}", workflow, e.getMessage());
    }
  }

  private void send() {
    transport.setCodeConcurrency(workflow, new ConcurrencyLimit(null, limit));
    pending = false;
  }
}
