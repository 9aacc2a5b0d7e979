package dev.pgworkflows.workflows;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * A schedule as the server holds it. {@code nextTick} is null when the expression has no future
 * tick, {@code lastTick} until a tick started a run; {@code source} is {@code api} (made through
 * the API or a {@link Schedules} call) or {@code code} (registered by a worker from its
 * definition). {@code overlap} says what a tick does while its last run ({@code lastRunId}) runs;
 * {@code buffered} ticks wait for that run to end; {@code failuresInRow} of its runs failed in a
 * row, and {@code pauseAfterFailures} (null: never) of them pause it.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ScheduleInfo(
    String name,
    String workflow,
    String cron,
    String zone,
    JsonNode input,
    Schedule.CatchUp catchUp,
    int maxCatchUp,
    boolean paused,
    Instant nextTick,
    Instant lastTick,
    String source,
    Instant createdAt,
    Instant updatedAt,
    Schedule.Overlap overlap,
    Integer pauseAfterFailures,
    int failuresInRow,
    int buffered,
    Long lastRunId) {}
