package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/retry}: hand the task back to be due again after
 * {@code delayMs}. {@code step} names the step whose attempt failed, with its {@code error} (the
 * journal's error shape): the server shows them as the run's retrying step, which an operator may
 * pause, reset or give other options.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RetryRequest(
    Long messageId, String receipt, Long delayMs, String step, JsonNode error) {

  /** A hand-back without the failure's error. */
  public RetryRequest(Long messageId, String receipt, Long delayMs, String step) {
    this(messageId, receipt, delayMs, step, null);
  }
}
