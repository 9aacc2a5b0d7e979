package dev.pgworkflows.protocol;

import java.util.List;

/**
 * {@code POST /v1/workflows/{name}/runs/{runId}/steps}: journal finished {@code run} steps (the
 * branches of a parallel group) under the lease, which carries on.
 */
public record JournalRequest(Long messageId, String receipt, List<StepRecord> steps) {}
