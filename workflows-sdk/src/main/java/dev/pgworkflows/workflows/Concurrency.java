package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.ConcurrencyLimit;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;

/**
 * A workflow's concurrency limit per key: at most {@link #limit()} runs of each concurrency key
 * ({@link StartOptions.Builder#concurrencyKey}) run at once, a start of a full key does what its
 * {@link ConcurrencyStrategy} says, and the limit of a key may come from each run's input ({@link
 * #limitFrom(String, Map)}: a premium customer's key takes 10, a free one's 1). A total limit
 * ({@link #total(int)}) caps the runs of all keys at once and shares its slots between keys in
 * turn, weighted ({@link #weights(Map)}), so a key with a long backlog does not hold the others
 * back. Immutable: each method answers a new value.
 *
 * <pre>{@code
 * Concurrency.limit(1).strategy(ConcurrencyStrategy.CANCEL_IN_PROGRESS)
 * Concurrency.limit(1).limitFrom("$.plan", Map.of("premium", 10, "free", 1))
 * Concurrency.limit(10).total(20).weights(Map.of("enterprise", 3))
 * }</pre>
 */
public final class Concurrency {
  private final int limit;
  private final ConcurrencyStrategy strategy;
  private final String limitFrom;
  private final Map<String, Integer> limits;
  private final Integer total;
  private final Map<String, Integer> weights;

  private Concurrency(
      int limit,
      ConcurrencyStrategy strategy,
      String limitFrom,
      Map<String, Integer> limits,
      Integer total,
      Map<String, Integer> weights) {
    this.limit = limit;
    this.strategy = strategy;
    this.limitFrom = limitFrom;
    this.limits = limits;
    this.total = total;
    this.weights = weights;
  }

  /** At most {@code n} running runs per key (1 to 100000), the rest queued. */
  public static Concurrency limit(int n) {
    return new Concurrency(
        checkLimit("limit", n), ConcurrencyStrategy.QUEUE, null, null, null, null);
  }

  /** These settings with {@code s} as what a start of a full key does. */
  public Concurrency strategy(ConcurrencyStrategy s) {
    if (s == null) {
      throw new IllegalArgumentException("strategy must not be null");
    }
    return new Concurrency(limit, s, limitFrom, limits, total, weights);
  }

  /**
   * Each run's key takes as its limit the whole number at {@code path} in the run's input (a JSON
   * path such as {@code $.maxParallel}). A start whose input has no value there is refused.
   */
  public Concurrency limitFrom(String path) {
    return new Concurrency(limit, strategy, checkPath(path), null, total, weights);
  }

  /**
   * Each run's key takes as its limit the one {@code limits} gives the value at {@code path} in the
   * run's input (a JSON path such as {@code $.plan}); a value {@code limits} does not name takes
   * {@link #limit()}. A start whose input has no value there is refused. At most 100 values.
   */
  public Concurrency limitFrom(String path, Map<String, Integer> limits) {
    return new Concurrency(
        limit, strategy, checkPath(path), numbers("limits", limits, 100, 100_000), total, weights);
  }

  /**
   * At most {@code n} runs of all keys of the workflow at once (1 to 100000). Runs waiting for one
   * of these slots take freed ones round-robin by key, not oldest first: each key in turn, a key of
   * weight 3 ({@link #weights}) three times for each turn of a key of weight 1.
   */
  public Concurrency total(int n) {
    return new Concurrency(limit, strategy, limitFrom, limits, checkLimit("total", n), weights);
  }

  /** The keys' weights in the turns of {@link #total(int)} (1 to 1000; a key not named: 1). */
  public Concurrency weights(Map<String, Integer> weights) {
    if (total == null) {
      throw new IllegalArgumentException("weights go with total(n): they share its slots");
    }
    return new Concurrency(
        limit, strategy, limitFrom, limits, total, numbers("weights", weights, 1000, 1000));
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

  /** The total limit over all keys, if any. */
  public OptionalInt total() {
    return total == null ? OptionalInt.empty() : OptionalInt.of(total);
  }

  /** The keys' weights under {@link #total()} (empty: every key weighs 1). */
  public Map<String, Integer> weights() {
    return weights == null ? Map.of() : weights;
  }

  /**
   * These settings as a request of {@code PUT /v1/workflows/{name}/concurrency} makes them. What is
   * left at its default is left out (the queue strategy among it), so a plain limit reads as it
   * always did, to a server of an earlier release too.
   */
  ConcurrencyLimit wire() {
    return new ConcurrencyLimit(
        null,
        limit,
        strategy == ConcurrencyStrategy.QUEUE ? null : strategy.wire(),
        limitFrom,
        limits,
        total,
        weights,
        null);
  }

  /** The settings a server answered with. */
  static Concurrency of(ConcurrencyLimit l) {
    return new Concurrency(
        l.limit(),
        ConcurrencyStrategy.of(l.strategy()),
        l.limitFrom(),
        l.limits() == null ? null : Map.copyOf(l.limits()),
        l.totalLimit(),
        l.weights() == null ? null : Map.copyOf(l.weights()));
  }

  private static int checkLimit(String what, int n) {
    if (n < 1 || n > 100_000) {
      throw new IllegalArgumentException(what + " must be between 1 and 100000, got " + n);
    }
    return n;
  }

  private static Map<String, Integer> numbers(
      String what, Map<String, Integer> values, int most, int max) {
    if (values == null || values.isEmpty() || values.size() > most) {
      throw new IllegalArgumentException(what + " must name 1 to " + most + " values");
    }
    Map<String, Integer> copy = new TreeMap<>();
    values.forEach(
        (name, n) -> {
          if (name == null || n == null) {
            throw new IllegalArgumentException(what + " must not hold null");
          }
          if (n < 1 || n > max) {
            throw new IllegalArgumentException(
                what + "." + name + " must be between 1 and " + max + ", got " + n);
          }
          copy.put(name, n);
        });
    return Map.copyOf(copy);
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
        && Objects.equals(c.limits, limits)
        && Objects.equals(c.total, total)
        && Objects.equals(c.weights, weights);
  }

  @Override
  public int hashCode() {
    return Objects.hash(limit, strategy, limitFrom, limits, total, weights);
  }

  @Override
  public String toString() {
    return "Concurrency[limit="
        + limit
        + ", strategy="
        + strategy
        + (limitFrom == null ? "" : ", limitFrom=" + limitFrom + ", limits=" + limits())
        + (total == null ? "" : ", total=" + total + ", weights=" + weights())
        + "]";
  }
}
