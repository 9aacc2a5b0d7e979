package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/continue-as-new}: end the run under its lease and
 * start its successor with {@code input} (absent: null), journaling {@code step} (the completion
 * the worker still held, if any) in the same transaction; {@code stepSeconds} is how long that step
 * took, for the step duration metric.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ContinueAsNewRequest(
    Long messageId, String receipt, JsonNode input, StepRecord step, Double stepSeconds) {}
