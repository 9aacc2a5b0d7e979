package dev.pgworkflows.protocol;

/** {@code POST /v1/workflows/{name}/runs/{runId}/lease}: extend the lease while a step runs. */
public record LeaseRequest(Long messageId, String receipt, Integer leaseSeconds) {}
