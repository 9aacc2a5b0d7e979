package dev.pgworkflows.protocol;

/**
 * A signal's answer: {@code outcome} is {@code delivered} (it fit the run's wait), {@code buffered}
 * (kept for a later wait) or {@code duplicate} (its idempotency key was sent before; nothing
 * stored).
 */
public record SignalOutcome(long runId, long signalId, String outcome, boolean delivered) {}
