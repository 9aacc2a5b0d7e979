package dev.pgworkflows.workflows;

/** The answer to a start: the run, its status, and whether this call created it. */
public record Started(String workflow, long runId, RunStatus status, boolean created) {}
