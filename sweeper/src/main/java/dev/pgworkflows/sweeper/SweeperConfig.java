package dev.pgworkflows.sweeper;

import java.time.Duration;

/**
 * How the sweeper runs.
 *
 * @param interval time between passes ({@code WORKFLOWS_SWEEPER_INTERVAL_MS}, default 5 min)
 * @param batchSize rows per delete (default 1000)
 * @param statementTimeout bound on each batch's statement (default 30 s)
 * @param outboxRetention how long delivered and dead HTTP deliveries are kept (default 7 days)
 * @param deadLetterRetention how long dead-lettered messages are kept (default 14 days)
 */
public record SweeperConfig(
    Duration interval,
    int batchSize,
    Duration statementTimeout,
    Duration outboxRetention,
    Duration deadLetterRetention) {

  public SweeperConfig {
    if (interval.toMillis() < 10) {
      throw new IllegalArgumentException("interval must be at least 10 ms");
    }
    if (batchSize < 1 || batchSize > 100_000) {
      throw new IllegalArgumentException("batch size must be 1 to 100000");
    }
    if (statementTimeout.toMillis() < 1) {
      throw new IllegalArgumentException("statement timeout must be positive");
    }
  }

  public static SweeperConfig defaults() {
    return new SweeperConfig(
        Duration.ofMinutes(5),
        1000,
        Duration.ofSeconds(30),
        Duration.ofDays(7),
        Duration.ofDays(14));
  }

  public SweeperConfig withInterval(Duration d) {
    return new SweeperConfig(d, batchSize, statementTimeout, outboxRetention, deadLetterRetention);
  }

  public SweeperConfig withStatementTimeout(Duration d) {
    return new SweeperConfig(interval, batchSize, d, outboxRetention, deadLetterRetention);
  }

  public SweeperConfig withBatchSize(int n) {
    return new SweeperConfig(interval, n, statementTimeout, outboxRetention, deadLetterRetention);
  }
}
