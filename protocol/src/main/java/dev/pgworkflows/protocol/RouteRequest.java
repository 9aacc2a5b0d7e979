package dev.pgworkflows.protocol;

import java.util.Map;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/route}: the step the task has come to needs {@code
 * labels} its worker lacks, so the worker hands the task ({@code messageId} under {@code receipt})
 * to the workers whose labels hold them; with {@code soft} (a step that prefers the labels), only
 * while the registry lists such a worker. The delivery does not count as an attempt.
 */
public record RouteRequest(
    Long messageId, String receipt, Map<String, String> labels, Boolean soft) {}
