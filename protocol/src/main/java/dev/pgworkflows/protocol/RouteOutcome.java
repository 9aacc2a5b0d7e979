package dev.pgworkflows.protocol;

/**
 * The answer to a hand-back to labelled workers: {@code routed}; {@code run_here} (a soft
 * preference and no listed worker has the labels: run the step yourself, the lease still holds);
 * {@code stale} or {@code not_running}.
 */
public record RouteOutcome(String outcome) {}
