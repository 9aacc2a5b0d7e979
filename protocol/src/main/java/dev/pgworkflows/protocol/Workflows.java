package dev.pgworkflows.protocol;

import java.util.List;

/** {@code GET /v1/workflows}: every workflow with run counts per status. */
public record Workflows(List<WorkflowSummary> workflows) {}
