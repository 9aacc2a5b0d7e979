package dev.pgworkflows.protocol;

/**
 * One completion of a batch: the fields of a {@link CompleteRequest}, the run it is for, and the
 * step's trace context.
 */
public record Completion(
    Long runId,
    Long messageId,
    String receipt,
    StepRecord step,
    Next next,
    RunResult result,
    Integer leaseSeconds,
    Double stepSeconds,
    String traceparent) {}
