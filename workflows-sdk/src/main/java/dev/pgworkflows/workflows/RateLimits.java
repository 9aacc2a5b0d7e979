package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.RateLimit;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The server's rate limits per concurrency key ({@link WorkflowClient#rateLimits()}), shared by
 * every workflow whose runs carry the key. Needs scope {@code admin}.
 */
public final class RateLimits {
  private final Transport transport;

  RateLimits(Transport transport) {
    this.transport = transport;
  }

  /**
   * Lets runs with concurrency key {@code key} be handed out at most {@code limit} times per {@code
   * period} (a task's start or resumption each takes one); {@code limit} null removes it. Needs
   * scope {@code admin}.
   */
  public void set(String key, Integer limit, Duration period) {
    if (key == null || key.isEmpty() || key.length() > 255) {
      throw new IllegalArgumentException("key must be 1 to 255 characters");
    }
    transport.send(
        "PUT",
        "/v1/rate-limits/" + URLEncoder.encode(key, StandardCharsets.UTF_8).replace("+", "%20"),
        new RateLimit(null, limit, limit == null ? null : period.toMillis(), null),
        Duration.ofSeconds(30));
  }
}
