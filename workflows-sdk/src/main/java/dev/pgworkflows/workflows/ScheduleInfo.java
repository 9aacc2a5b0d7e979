package dev.pgworkflows.workflows;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * A schedule as the server holds it. {@code nextTick} is null when the expression has no future
 * tick, {@code lastTick} until a tick started a run; {@code source} is {@code api} (made through
 * the API or a {@link Schedules} call) or {@code code} (registered by a worker from its
 * definition).
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
    Instant updatedAt) {}
