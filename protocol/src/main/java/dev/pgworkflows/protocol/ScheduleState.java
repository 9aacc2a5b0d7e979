package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.time.Instant;

/**
 * A stored schedule: what it starts and when. {@code nextTick} is absent when the expression has no
 * future tick; {@code source} is {@code api} or {@code code} (registered by a worker). {@code
 * overlap} says what a tick does while its last run ({@code lastRunId}) still runs; {@code
 * buffered} ticks wait for it to end; {@code failuresInRow} of its runs failed, and {@code
 * pauseAfterFailures} (absent: never) of them pause it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ScheduleState(
    String name,
    String workflow,
    String cron,
    String zone,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String input,
    String catchUp,
    int maxCatchUp,
    boolean paused,
    Instant nextTick,
    Instant lastTick,
    String source,
    Instant createdAt,
    Instant updatedAt,
    String overlap,
    Integer pauseAfterFailures,
    int failuresInRow,
    int buffered,
    Long lastRunId) {}
