package dev.pgworkflows.protocol;

import java.util.List;

/** {@code GET /v1/workers}: the workers seen lately, by workflow and id. */
public record Workers(List<WorkerSeen> workers) {}
