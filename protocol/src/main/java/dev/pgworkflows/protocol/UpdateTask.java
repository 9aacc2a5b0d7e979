package dev.pgworkflows.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/update-task}: what a worker holding a task of
 * reason {@code update} answers: the run's pending updates, oldest first, and the run's state as
 * the handlers start from it.
 */
public record UpdateTask(List<Pending> updates, JsonNode state) {
  /** One update waiting for its handler. */
  public record Pending(long updateId, String update, JsonNode input) {}

  /** The body of the request: the task, as its lease names it. */
  public record Request(Long messageId, String receipt) {}
}
