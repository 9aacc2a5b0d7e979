package dev.pgworkflows.protocol;

/** A workflow, its runs per status, and whether it is paused (none of its runs handed out). */
public record WorkflowSummary(
    String name,
    long running,
    long completed,
    long failed,
    long cancelled,
    long timedOut,
    boolean paused) {}
