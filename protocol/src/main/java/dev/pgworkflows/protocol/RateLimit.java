package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;

/**
 * {@code PUT /v1/rate-limits/{key}}: runs with concurrency key {@code key} are handed out at most
 * {@code limit} times per {@code periodMs} (both null: no bucket). The answer adds the key and,
 * while a step's rate-limited answer holds the key back, {@code suspendedUntil}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RateLimit(String key, Integer limit, Long periodMs, Instant suspendedUntil) {}
