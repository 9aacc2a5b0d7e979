package dev.pgworkflows.workflows;

import java.time.Instant;

/**
 * What a backfill ({@link Schedules#backfill}) did with one tick: {@code started} its run ({@code
 * created} false when the tick had run before), {@code buffered} it behind the schedule's running
 * run, or {@code skipped} it, as the schedule's overlap policy says.
 */
public record BackfillTick(Instant tick, String outcome, Long runId, Boolean created) {}
