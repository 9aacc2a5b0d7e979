package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.Retry;
import java.time.Duration;
import java.util.Locale;

/**
 * The retry options an operator set for one run's retrying step (a task's {@code stepOptions}),
 * applied over the code's policy: each option given replaces the code's, the rest stay.
 */
final class OperatorRetry {
  private OperatorRetry() {}

  /** {@code code}, with {@code options} applied when they name {@code step}. */
  static Retry apply(JsonNode options, String step, Retry code) {
    if (options == null || !options.isObject() || !step.equals(options.path("step").asText())) {
      return code;
    }
    int attempts = options.has("attempts") ? options.get("attempts").asInt() : code.attempts();
    Retry.Backoff backoff = backoff(options.path("backoff").asText(null), code.backoff());
    Duration base = millis(options, "baseMs", code.base());
    Duration max = millis(options, "maxMs", code.max());
    if (max.compareTo(base) < 0) {
      max = base;
    }
    Duration timeout = millis(options, "timeoutMs", code.timeout());
    return new Retry(
        Math.max(1, attempts), backoff, base, max, code.jitter(), code.nonRetryable(), timeout);
  }

  private static Retry.Backoff backoff(String kind, Retry.Backoff code) {
    if (kind == null) {
      return code;
    }
    try {
      return Retry.Backoff.valueOf(kind.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return code;
    }
  }

  private static Duration millis(JsonNode options, String field, Duration code) {
    JsonNode v = options.get(field);
    return v == null || !v.canConvertToLong() ? code : Duration.ofMillis(v.asLong());
  }
}
