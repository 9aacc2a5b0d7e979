package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/**
 * How a run continues after a step: at once ({@code inline} keeps the lease), after {@code delayMs}
 * (a sleep), or when an event comes ({@code wait}, {@code delayMs} being its timeout).
 *
 * @param waitFor the {@code wait} field ({@code wait()} would clash with {@link Object#wait()})
 * @param until accepted from workers of earlier versions and ignored: a delay is counted from when
 *     the server applies it, on the database's clock, never placed by a worker's wall clock (a
 *     worker sends what is left of a sleep as {@code delayMs})
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Next(
    String reason,
    Long delayMs,
    Boolean inline,
    @JsonProperty("wait") Wait waitFor,
    Instant until) {}
