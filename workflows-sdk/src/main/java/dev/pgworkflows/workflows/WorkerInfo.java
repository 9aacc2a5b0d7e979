package dev.pgworkflows.workflows;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A worker of one workflow as the servers saw it last (see {@link WorkflowClient#workers}): its id,
 * its host, the versions it runs, its slots (null when it did not say), {@code stream} or {@code
 * poll}, the server that saw it, when, and the labels it declared (empty: none).
 */
public record WorkerInfo(
    String id,
    String workflow,
    String host,
    List<String> versions,
    Integer slots,
    String mode,
    String server,
    Instant lastSeen,
    Map<String, String> labels) {}
