package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/update-answers}: a worker's answers to the updates
 * of the update task it holds, which this ends. Each answer is {@code completed} (with {@code
 * output}), {@code failed} or {@code refused} (with {@code error}); a completed or failed one is
 * journaled with its {@code state} changes and sends its {@code signals} to the run.
 */
public record UpdateAnswers(Long messageId, String receipt, List<Answer> answers) {

  /** One update's answer. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Answer(
      long updateId,
      String status,
      JsonNode output,
      JsonNode error,
      JsonNode state,
      List<SelfSignal> signals) {}

  /** A signal a handler sends to its own run. */
  public record SelfSignal(String event, JsonNode payload) {}

  /**
   * What the answers did: {@code ok}, {@code stale} (the lease was lost) or {@code not_running}.
   */
  public record Outcome(String outcome) {}
}
