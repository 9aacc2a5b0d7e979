package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.ThrottleSettings;
import java.time.Duration;
import java.util.Objects;

/**
 * A workflow's throttle: at most {@code limit} starts per {@code period}, {@link #burst} of them at
 * once, for the whole workflow or for each concurrency key ({@link #perKey}). Starts beyond the
 * rate are queued, not refused: each run is made at once and its first task is due at its turn.
 * Immutable: each method answers a new value.
 *
 * <pre>{@code
 * Throttle.of(100, Duration.ofMinutes(1)).burst(10).perKey()
 * }</pre>
 */
public final class Throttle {
  private final int limit;
  private final Duration period;
  private final int burst;
  private final boolean perKey;

  private Throttle(int limit, Duration period, int burst, boolean perKey) {
    this.limit = limit;
    this.period = period;
    this.burst = burst;
    this.perKey = perKey;
  }

  /** At most {@code limit} starts (1 to 1000000) per {@code period} (a millisecond to a day). */
  public static Throttle of(int limit, Duration period) {
    if (limit < 1 || limit > 1_000_000) {
      throw new IllegalArgumentException("limit must be between 1 and 1000000, got " + limit);
    }
    if (period == null || period.toMillis() < 1 || period.compareTo(Duration.ofDays(1)) > 0) {
      throw new IllegalArgumentException("period must be between a millisecond and a day");
    }
    return new Throttle(limit, period, 1, false);
  }

  /** How many starts may go at once before the rate holds (1 to 1000000; default 1). */
  public Throttle burst(int n) {
    if (n < 1 || n > 1_000_000) {
      throw new IllegalArgumentException("burst must be between 1 and 1000000, got " + n);
    }
    return new Throttle(limit, period, n, perKey);
  }

  /** Each concurrency key has a rate of its own (runs without a key share one). */
  public Throttle perKey() {
    return new Throttle(limit, period, burst, true);
  }

  public int limit() {
    return limit;
  }

  public Duration period() {
    return period;
  }

  public int burst() {
    return burst;
  }

  public boolean isPerKey() {
    return perKey;
  }

  /** These settings as a request of {@code PUT /v1/workflows/{name}/throttle} makes them. */
  ThrottleSettings wire() {
    return new ThrottleSettings(null, limit, period.toMillis(), burst, perKey);
  }

  /** The throttle a server answered with. */
  static Throttle of(ThrottleSettings t) {
    return new Throttle(
        t.limit(), Duration.ofMillis(t.periodMs()), t.burst(), Boolean.TRUE.equals(t.perKey()));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Throttle t
        && t.limit == limit
        && t.period.equals(period)
        && t.burst == burst
        && t.perKey == perKey;
  }

  @Override
  public int hashCode() {
    return Objects.hash(limit, period, burst, perKey);
  }

  @Override
  public String toString() {
    return "Throttle["
        + limit
        + " per "
        + period
        + ", burst "
        + burst
        + (perKey ? ", per key]" : "]");
  }
}
