package dev.pgworkflows.workflows;

import java.time.Duration;

/** The rules a start's and a child's options share, each throwing naming the option. */
final class OptionRules {
  static final Duration ONE_YEAR = Duration.ofDays(365);

  private OptionRules() {}

  static void check(
      Integer version,
      Integer retentionDays,
      String concurrencyKey,
      Integer priority,
      Duration deadline) {
    if (version != null && version < 1) {
      throw new IllegalArgumentException("version must be >= 1");
    }
    if (retentionDays != null && retentionDays < 1) {
      throw new IllegalArgumentException("retention must be at least one day");
    }
    if (concurrencyKey != null && (concurrencyKey.isEmpty() || concurrencyKey.length() > 255)) {
      throw new IllegalArgumentException("concurrency key must be 1 to 255 characters");
    }
    if (priority != null && (priority < 0 || priority > 9)) {
      throw new IllegalArgumentException("priority must be between 0 and 9");
    }
    if (deadline != null && (deadline.toMillis() < 1 || deadline.compareTo(ONE_YEAR) > 0)) {
      throw new IllegalArgumentException("deadline must be between a millisecond and a year");
    }
  }
}
