package dev.pgworkflows.protocol;

/** A workflow and its runs per status. */
public record WorkflowSummary(
    String name, long running, long completed, long failed, long cancelled, long timedOut) {}
