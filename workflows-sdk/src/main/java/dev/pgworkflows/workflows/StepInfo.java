package dev.pgworkflows.workflows;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * One journaled step of a run; {@code setAside} for a row a restart set aside (listed only when
 * asked for: it is never replayed).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record StepInfo(
    String name,
    String kind,
    JsonNode output,
    JsonNode error,
    boolean timedOut,
    int attempts,
    Instant startedAt,
    Instant completedAt,
    boolean setAside) {}
