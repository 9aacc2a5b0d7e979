package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;

/** How a run ended: {@code completed} with an output, or {@code failed} with an error. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunResult(String status, JsonNode output, JsonNode error) {}
