package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A workflow subscription's batch settings: one run per batch of up to {@code maxSize} published
 * messages, or {@code timeoutMs} after the batch's first message, one batch per value at {@code
 * key} (a JSON path into the message) when given; the run's input is the messages' bodies, oldest
 * first.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record EventBatch(Integer maxSize, Long timeoutMs, String key) {}
