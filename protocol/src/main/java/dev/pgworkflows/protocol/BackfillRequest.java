package dev.pgworkflows.protocol;

import java.time.Instant;

/**
 * {@code POST /v1/schedules/{name}/backfill}: run the schedule's ticks from {@code from}
 * (inclusive) to {@code to} (exclusive) now, as if at their ticks, under its overlap policy.
 */
public record BackfillRequest(Instant from, Instant to) {}
