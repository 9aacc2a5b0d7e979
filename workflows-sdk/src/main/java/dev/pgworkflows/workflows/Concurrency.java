package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.ConcurrencyLimit;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A workflow's concurrency limit per key: at most {@link #limit()} runs of each concurrency key
 * ({@link StartOptions.Builder#concurrencyKey}) run at once, a start of a full key does what its
 * {@link ConcurrencyStrategy} says, and the limit of a key may come from each run's input ({@link
 * #limitFrom(String, Map)}: a premium customer's key takes 10, a free one's 1). Immutable: each
 * method answers a new value.
 *
 * <pre>{@code
 * Concurrency.limit(1).strategy(ConcurrencyStrategy.CANCEL_IN_PROGRESS)
 * Concurrency.limit(1).limitFrom("$.plan", Map.of("premium", 10, "free", 1))
 * }</pre>
 */
public final class Concurrency {
  private final int limit;
  private final ConcurrencyStrategy strategy;
  private final String limitFrom;
  private final Map<String, Integer> limits;

  private Concurrency(
      int limit, ConcurrencyStrategy strategy, String limitFrom, Map<String, Integer> limits) {
    this.limit = limit;
    this.strategy = strategy;
    this.limitFrom = limitFrom;
    this.limits = limits;
  }

  /** At most {@code n} running runs per key (1 to 100000), the rest queued. */
  public static Concurrency limit(int n) {
    return new Concurrency(checkLimit("limit", n), ConcurrencyStrategy.QUEUE, null, null);
  }

  /** These settings with {@code s} as what a start of a full key does. */
  public Concurrency strategy(ConcurrencyStrategy s) {
    if (s == null) {
      throw new IllegalArgumentException("strategy must not be null");
    }
    return new Concurrency(limit, s, limitFrom, limits);
  }

  /**
   * Each run's key takes as its limit the whole number at {@code path} in the run's input (a JSON
   * path such as {@code $.maxParallel}). A start whose input has no value there is refused.
   */
  public Concurrency limitFrom(String path) {
    return new Concurrency(limit, strategy, checkPath(path), null);
  }

  /**
   * Each run's key takes as its limit the one {@code limits} gives the value at {@code path} in the
   * run's input (a JSON path such as {@code $.plan}); a value {@code limits} does not name takes
   * {@link #limit()}. A start whose input has no value there is refused. At most 100 values.
   */
  public Concurrency limitFrom(String path, Map<String, Integer> limits) {
    if (limits == null || limits.isEmpty() || limits.size() > 100) {
      throw new IllegalArgumentException("limits must map 1 to 100 values to limits");
    }
    Map<String, Integer> copy = new TreeMap<>();
    limits.forEach(
        (value, n) -> {
          if (value == null || n == null) {
            throw new IllegalArgumentException("limits must not hold null");
          }
          copy.put(value, checkLimit("limits." + value, n));
        });
    return new Concurrency(limit, strategy, checkPath(path), Map.copyOf(copy));
  }

  /** The limit per key (the default one when {@link #limitFrom()} is set). */
  public int limit() {
    return limit;
  }

  public ConcurrencyStrategy strategy() {
    return strategy;
  }

  /** The JSON path into a run's input that gives its key's limit, if any. */
  public Optional<String> limitFrom() {
    return Optional.ofNullable(limitFrom);
  }

  /** The limits by the value at {@link #limitFrom()} (empty: the value is the limit). */
  public Map<String, Integer> limits() {
    return limits == null ? Map.of() : limits;
  }

  /** These settings as a request of {@code PUT /v1/workflows/{name}/concurrency} makes them. */
  ConcurrencyLimit wire() {
    return new ConcurrencyLimit(null, limit, strategy.wire(), limitFrom, limits, null);
  }

  /** The settings a server answered with. */
  static Concurrency of(ConcurrencyLimit l) {
    return new Concurrency(
        l.limit(),
        ConcurrencyStrategy.of(l.strategy()),
        l.limitFrom(),
        l.limits() == null ? null : Map.copyOf(l.limits()));
  }

  private static int checkLimit(String what, int n) {
    if (n < 1 || n > 100_000) {
      throw new IllegalArgumentException(what + " must be between 1 and 100000, got " + n);
    }
    return n;
  }

  private static String checkPath(String path) {
    if (path == null || !path.startsWith("$") || path.length() > 255) {
      throw new IllegalArgumentException(
          "limitFrom must be a JSON path of at most 255 characters, such as $.plan");
    }
    return path;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Concurrency c
        && c.limit == limit
        && c.strategy == strategy
        && Objects.equals(c.limitFrom, limitFrom)
        && Objects.equals(c.limits, limits);
  }

  @Override
  public int hashCode() {
    return Objects.hash(limit, strategy, limitFrom, limits);
  }

  @Override
  public String toString() {
    return "Concurrency[limit="
        + limit
        + ", strategy="
        + strategy
        + (limitFrom == null ? "" : ", limitFrom=" + limitFrom + ", limits=" + limits())
        + "]";
  }
}
