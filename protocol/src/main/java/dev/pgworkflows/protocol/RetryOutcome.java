package dev.pgworkflows.protocol;

/** A retry's answer: {@code ok}, {@code not_running} or {@code stale}. */
public record RetryOutcome(String outcome) {}
