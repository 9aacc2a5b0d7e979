package dev.pgworkflows.workflows;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How a failing step is retried: {@code attempts} tries in all, waiting per {@link Backoff} between
 * them, with ±{@code jitter} randomness. Exceptions of a {@link #nonRetryable} type fail the run at
 * once. Default: 3 attempts, exponential from 1 s to 60 s, 20 % jitter, no timeout.
 *
 * <p>With a {@link #withTimeout timeout}, an attempt still running after it is abandoned: its
 * thread is interrupted, whatever it returns later is discarded, and the attempt fails with a
 * {@link StepTimeoutException}, retried like any failure.
 */
public record Retry(
    int attempts,
    Backoff backoff,
    Duration base,
    Duration max,
    double jitter,
    List<Class<? extends Throwable>> nonRetryable,
    Duration timeout) {

  /** The shape of the waits between attempts. */
  public enum Backoff {
    /** Always {@code base}. */
    FIXED,
    /** {@code base × n} before attempt n+1. */
    LINEAR,
    /** {@code base × 2^(n-1)} before attempt n+1. */
    EXPONENTIAL
  }

  public static final Retry DEFAULT =
      new Retry(
          3, Backoff.EXPONENTIAL, Duration.ofSeconds(1), Duration.ofSeconds(60), 0.2, List.of());

  public Retry {
    if (attempts < 1) {
      throw new IllegalArgumentException("attempts must be >= 1, got " + attempts);
    }
    if (backoff == null) {
      throw new IllegalArgumentException("backoff must not be null");
    }
    if (base == null || base.isNegative()) {
      throw new IllegalArgumentException("base must be zero or positive");
    }
    if (max == null || max.compareTo(base) < 0) {
      throw new IllegalArgumentException("max must be at least base");
    }
    if (jitter < 0 || jitter > 1) {
      throw new IllegalArgumentException("jitter must be between 0 and 1, got " + jitter);
    }
    nonRetryable = List.copyOf(nonRetryable);
    if (timeout != null && timeout.toMillis() < 1) {
      throw new IllegalArgumentException("timeout must be at least a millisecond");
    }
  }

  /** A policy whose attempts have no timeout. */
  public Retry(
      int attempts,
      Backoff backoff,
      Duration base,
      Duration max,
      double jitter,
      List<Class<? extends Throwable>> nonRetryable) {
    this(attempts, backoff, base, max, jitter, nonRetryable, null);
  }

  /**
   * This policy with each attempt limited to {@code limit}: an attempt running longer is abandoned
   * (its thread interrupted, its late result discarded) and counts as a failed attempt with a
   * {@link StepTimeoutException}. A step with a timeout runs on a thread of its own.
   */
  public Retry withTimeout(Duration limit) {
    return new Retry(attempts, backoff, base, max, jitter, nonRetryable, limit);
  }

  public static Retry fixed(int attempts, Duration delay) {
    return new Retry(attempts, Backoff.FIXED, delay, delay, 0.2, List.of());
  }

  public static Retry linear(int attempts, Duration base) {
    return new Retry(
        attempts, Backoff.LINEAR, base, Duration.ofSeconds(60).plus(base), 0.2, List.of());
  }

  public static Retry exponential(int attempts, Duration base) {
    Duration max = base.compareTo(Duration.ofSeconds(60)) > 0 ? base : Duration.ofSeconds(60);
    return new Retry(attempts, Backoff.EXPONENTIAL, base, max, 0.2, List.of());
  }

  /** No retries: the first failure fails the run. */
  public static Retry none() {
    return new Retry(1, Backoff.FIXED, Duration.ZERO, Duration.ZERO, 0, List.of());
  }

  public Retry withMax(Duration newMax) {
    return new Retry(attempts, backoff, base, newMax, jitter, nonRetryable, timeout);
  }

  public Retry withJitter(double newJitter) {
    return new Retry(attempts, backoff, base, max, newJitter, nonRetryable, timeout);
  }

  /** Exceptions of these types fail the step at once, whatever attempts are left. */
  public Retry nonRetryable(Class<?>... types) {
    List<Class<? extends Throwable>> list = new java.util.ArrayList<>();
    for (Class<?> t : types) {
      if (!Throwable.class.isAssignableFrom(t)) {
        throw new IllegalArgumentException(t.getName() + " is not an exception type");
      }
      list.add(t.asSubclass(Throwable.class));
    }
    return new Retry(attempts, backoff, base, max, jitter, list, timeout);
  }

  /** Whether a failure of attempt {@code attempt} (1-based) with {@code error} gets another try. */
  public boolean retries(int attempt, Throwable error) {
    if (attempt >= attempts) {
      return false;
    }
    for (Class<? extends Throwable> t : nonRetryable) {
      if (t.isInstance(error)) {
        return false;
      }
    }
    return true;
  }

  /** The wait after failed attempt {@code attempt} (1-based), jitter included. */
  public Duration delayAfter(int attempt) {
    long baseMs = base.toMillis();
    long ms =
        switch (backoff) {
          case FIXED -> baseMs;
          case LINEAR -> baseMs * attempt;
          case EXPONENTIAL -> baseMs << Math.min(Math.max(attempt - 1, 0), 30);
        };
    ms = Math.min(Math.max(ms, 0), max.toMillis());
    if (jitter > 0 && ms > 0) {
      double factor = 1 + jitter * (ThreadLocalRandom.current().nextDouble() * 2 - 1);
      ms = Math.round(ms * factor);
    }
    return Duration.ofMillis(ms);
  }
}
