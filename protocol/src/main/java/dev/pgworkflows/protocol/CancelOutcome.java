package dev.pgworkflows.protocol;

/** A cancel's answer: cancelled now ({@code cancelled} true) or already ended. */
public record CancelOutcome(long runId, String status, boolean cancelled) {}
