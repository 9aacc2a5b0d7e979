package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A continuation's answer: {@code ok} with the successor in {@code continuedTo}, {@code stale} (the
 * lease was lost; nothing changed) or {@code not_running} (the run had ended; {@code continuedTo}
 * names its successor when it had continued as new).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ContinueAsNewOutcome(String outcome, Long continuedTo) {}
