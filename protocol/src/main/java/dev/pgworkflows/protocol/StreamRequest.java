package dev.pgworkflows.protocol;

import java.util.List;

/**
 * {@code POST /v1/workflows/{name}/tasks/stream}: a task stream for a worker of {@code slots} slots
 * in all, open for {@code seconds}, its tasks leased for {@code leaseSeconds}.
 */
public record StreamRequest(
    List<Integer> versions, Integer slots, Integer seconds, Integer leaseSeconds) {}
