package dev.pgworkflows.protocol;

/** A start's answer: the run, its status, and whether this call created it. */
public record StartResult(long runId, String status, boolean created) implements StartAnswer {}
