package dev.pgworkflows.protocol;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A worker of one workflow as the servers saw it last: its id (its {@code X-Worker-Id}, or its
 * address), its host, the versions it runs, its slots (null when it did not say), whether it reads
 * a task stream or polls ({@code stream} or {@code poll}), the server that saw it and when, and the
 * labels it declared.
 */
public record WorkerSeen(
    String id,
    String workflow,
    String host,
    List<String> versions,
    Integer slots,
    String mode,
    String server,
    Instant lastSeen,
    Map<String, String> labels) {}
