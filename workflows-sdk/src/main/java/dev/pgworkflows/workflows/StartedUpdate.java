package dev.pgworkflows.workflows;

/**
 * The answer to an update-with-start ({@link WorkflowClient#updateWithStart}): the run the update
 * went to, whether this call started it, and the handler's answer.
 */
public record StartedUpdate<R>(long runId, boolean runCreated, R answer) {}
