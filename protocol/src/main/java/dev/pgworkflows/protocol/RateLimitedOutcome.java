package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;

/**
 * The answer to a rate-limited hand-back: {@code ok} with when the run is due again ({@code
 * resumeAt}), or {@code stale} or {@code not_running}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RateLimitedOutcome(String outcome, Instant resumeAt) {}
