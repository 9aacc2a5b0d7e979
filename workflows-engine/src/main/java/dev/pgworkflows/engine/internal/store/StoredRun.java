package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.protocol.Run;

/**
 * A run as stored: what the API shows, and its trace context ({@code <trace id>-<run span
 * id>-<parent span id>}), which only the server's run span needs.
 */
public record StoredRun(Run run, String traceContext) {}
