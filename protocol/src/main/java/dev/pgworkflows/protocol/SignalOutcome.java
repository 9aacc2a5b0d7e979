package dev.pgworkflows.protocol;

/**
 * A signal's answer: delivered, or {@code reason} says why not (not running, not waiting for that
 * event, payload does not match).
 */
public record SignalOutcome(long runId, boolean delivered, String reason) {}
