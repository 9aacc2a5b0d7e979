package dev.pgworkflows.protocol;

import java.util.List;

/**
 * {@code POST /v1/workflows/{name}/tasks/poll}: tasks of these versions, up to {@code max}, waiting
 * up to {@code waitSeconds}, leased for {@code leaseSeconds}. Null fields take the server's
 * defaults.
 */
public record PollRequest(
    List<Integer> versions, Integer max, Integer waitSeconds, Integer leaseSeconds) {}
