package dev.pgworkflows.protocol;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/complete}: journal {@code step} and continue
 * ({@code next}) or end the run ({@code result}), acking the held task.
 *
 * @param stepSeconds how long the step took, for the step duration metric
 */
public record CompleteRequest(
    Long messageId,
    String receipt,
    StepRecord step,
    Next next,
    RunResult result,
    Integer leaseSeconds,
    Double stepSeconds) {}
