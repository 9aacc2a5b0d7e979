package dev.pgworkflows.protocol;

/**
 * A journal request's answer: {@code ok} with how many of its steps were new ({@code journaled}),
 * or {@code stale} or {@code not_running} (the lease was lost; nothing was written).
 */
public record JournalOutcome(String outcome, int journaled) {}
