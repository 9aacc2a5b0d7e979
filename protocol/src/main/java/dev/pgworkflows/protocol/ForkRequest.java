package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * Forks a run from {@code fromStep}: a new run with the journal rows before it, and {@code input}
 * when given (the origin's otherwise; a JSON null is an input too).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ForkRequest(String fromStep, JsonNode input) {}
