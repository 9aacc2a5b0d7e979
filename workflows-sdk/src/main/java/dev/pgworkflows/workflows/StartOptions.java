package dev.pgworkflows.workflows;

import java.time.Duration;
import java.time.Instant;

/**
 * Options of a start. An idempotency key makes repeated starts return the first run; a version pins
 * the run to that code version (default: the newest a worker serves); retention overrides the
 * default 30 days, clamped by the server's ceiling; a concurrency key and a priority are flow
 * control (see {@link #concurrencyKey} and {@link #withPriority}); a start time or a delay, a
 * deadline and a debounce are its timing (see {@link #startAt}, {@link #delay}, {@link #deadline},
 * {@link #deadlineAt} and {@link #debounce}).
 */
public record StartOptions(
    String idempotencyKey,
    Integer version,
    Integer retentionDays,
    String concurrencyKey,
    Integer priority,
    Instant startAt,
    Duration delay,
    Duration deadline,
    String debounceKey,
    Duration debounceWindow,
    Instant deadlineAt) {
  private static final Duration ONE_YEAR = Duration.ofDays(365);

  public static final StartOptions NONE = new StartOptions(null, null, null);

  /** Options without a concurrency key or a priority. */
  public StartOptions(String idempotencyKey, Integer version, Integer retentionDays) {
    this(idempotencyKey, version, retentionDays, null, null);
  }

  /** Options due at once, with no deadline and no debounce. */
  public StartOptions(
      String idempotencyKey,
      Integer version,
      Integer retentionDays,
      String concurrencyKey,
      Integer priority) {
    this(
        idempotencyKey,
        version,
        retentionDays,
        concurrencyKey,
        priority,
        null,
        null,
        null,
        null,
        null,
        null);
  }

  /** Options without a deadline at a fixed time. */
  public StartOptions(
      String idempotencyKey,
      Integer version,
      Integer retentionDays,
      String concurrencyKey,
      Integer priority,
      Instant startAt,
      Duration delay,
      Duration deadline,
      String debounceKey,
      Duration debounceWindow) {
    this(
        idempotencyKey,
        version,
        retentionDays,
        concurrencyKey,
        priority,
        startAt,
        delay,
        deadline,
        debounceKey,
        debounceWindow,
        null);
  }

  public StartOptions {
    if (idempotencyKey != null && (idempotencyKey.isEmpty() || idempotencyKey.length() > 255)) {
      throw new IllegalArgumentException("idempotency key must be 1 to 255 characters");
    }
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
    if (startAt != null && delay != null) {
      throw new IllegalArgumentException("give a start time or a delay, not both");
    }
    if (delay != null && (delay.isNegative() || delay.compareTo(ONE_YEAR) > 0)) {
      throw new IllegalArgumentException("delay must be between zero and a year");
    }
    if (deadline != null && (deadline.toMillis() < 1 || deadline.compareTo(ONE_YEAR) > 0)) {
      throw new IllegalArgumentException("deadline must be between a millisecond and a year");
    }
    if (deadline != null && deadlineAt != null) {
      throw new IllegalArgumentException("give a deadline or a deadline time, not both");
    }
    if ((debounceKey == null) != (debounceWindow == null)) {
      throw new IllegalArgumentException("a debounce key and its window go together");
    }
    if (debounceKey != null) {
      if (debounceKey.isEmpty() || debounceKey.length() > 255) {
        throw new IllegalArgumentException("debounce key must be 1 to 255 characters");
      }
      if (debounceWindow.toMillis() < 1 || debounceWindow.compareTo(Duration.ofDays(1)) > 0) {
        throw new IllegalArgumentException(
            "debounce window must be between a millisecond and a day");
      }
      if (startAt != null || delay != null) {
        throw new IllegalArgumentException("a debounced start cannot also be delayed");
      }
      if (idempotencyKey != null) {
        throw new IllegalArgumentException("a debounced start cannot have an idempotency key");
      }
    }
  }

  /**
   * Options whose run's first task is due at {@code at} (at most a year ahead; a time past means
   * now). The run exists at once: it can be read, listed and cancelled meanwhile.
   */
  public static StartOptions startAt(Instant at) {
    return NONE.withStartAt(at);
  }

  /** Options whose run's first task is due {@code d} after the start (at most a year). */
  public static StartOptions delay(Duration d) {
    return NONE.withDelay(d);
  }

  /**
   * Options whose run the server ends as {@link RunStatus#TIMED_OUT} should it still be running
   * {@code d} after it was due; its workers find out on their next write or heartbeat ({@link
   * WorkflowContext#cancellation()}). It overrides the definition's {@link
   * Workflow.Builder#deadline}.
   */
  public static StartOptions deadline(Duration d) {
    return NONE.withDeadline(d);
  }

  /**
   * Options whose run the server ends as {@link RunStatus#TIMED_OUT} should it still be running at
   * {@code at} (later than the run is due, at most a year after), as {@link #deadline} does. The
   * server refuses a time already past with {@link ApiException} (400, field {@code deadlineAt}).
   */
  public static StartOptions deadlineAt(Instant at) {
    return NONE.withDeadlineAt(at);
  }

  /**
   * Options of a trailing debounce: starts of the workflow with the same {@code key} within {@code
   * window} collapse into one run with the latest input, answered with the same run and {@link
   * Started#debounced()}. Each such start pushes the run's first task to now plus the window, but
   * never later than ten windows after the first start; once the run has begun, the key starts a
   * new run.
   */
  public static StartOptions debounce(String key, Duration window) {
    return NONE.withDebounce(key, window);
  }

  /** These options with the first task due at {@code at}. */
  public StartOptions withStartAt(Instant at) {
    return new StartOptions(
        idempotencyKey,
        version,
        retentionDays,
        concurrencyKey,
        priority,
        at,
        null,
        deadline,
        debounceKey,
        debounceWindow,
        deadlineAt);
  }

  /** These options with the first task due {@code d} after the start. */
  public StartOptions withDelay(Duration d) {
    return new StartOptions(
        idempotencyKey,
        version,
        retentionDays,
        concurrencyKey,
        priority,
        null,
        d,
        deadline,
        debounceKey,
        debounceWindow,
        deadlineAt);
  }

  /** These options with a deadline {@code d} after the run is due. */
  public StartOptions withDeadline(Duration d) {
    return new StartOptions(
        idempotencyKey,
        version,
        retentionDays,
        concurrencyKey,
        priority,
        startAt,
        delay,
        d,
        debounceKey,
        debounceWindow,
        null);
  }

  /** These options with a deadline at {@code at}, which must be later than the run is due. */
  public StartOptions withDeadlineAt(Instant at) {
    if (at == null) {
      throw new IllegalArgumentException("deadline time must not be null");
    }
    return new StartOptions(
        idempotencyKey,
        version,
        retentionDays,
        concurrencyKey,
        priority,
        startAt,
        delay,
        null,
        debounceKey,
        debounceWindow,
        at);
  }

  /** These options with a debounce key and its window. */
  public StartOptions withDebounce(String key, Duration window) {
    return new StartOptions(
        idempotencyKey,
        version,
        retentionDays,
        concurrencyKey,
        priority,
        startAt,
        delay,
        deadline,
        key,
        window,
        deadlineAt);
  }

  /**
   * Options whose run has concurrency key {@code key}: at most the workflow's concurrency limit of
   * the key's runs run at once (see {@link WorkflowClient#setConcurrencyLimit}), and the key's rate
   * limit and {@link RateLimited} suspensions apply to it.
   */
  public static StartOptions concurrencyKey(String key) {
    return NONE.withConcurrencyKey(key);
  }

  /** These options with concurrency key {@code key}. */
  public StartOptions withConcurrencyKey(String key) {
    return new StartOptions(
        idempotencyKey,
        version,
        retentionDays,
        key,
        priority,
        startAt,
        delay,
        deadline,
        debounceKey,
        debounceWindow,
        deadlineAt);
  }

  /**
   * These options with priority {@code level}, 0 (the default) to 9: due runs of a higher priority
   * are handed out first; each level counts as a minute of waiting, so an older run of a lower
   * priority still goes first once it has waited that much longer.
   */
  public StartOptions withPriority(int level) {
    return new StartOptions(
        idempotencyKey,
        version,
        retentionDays,
        concurrencyKey,
        level,
        startAt,
        delay,
        deadline,
        debounceKey,
        debounceWindow,
        deadlineAt);
  }

  public static StartOptions idempotencyKey(String key) {
    return new StartOptions(key, null, null);
  }

  public StartOptions withIdempotencyKey(String key) {
    return new StartOptions(
        key,
        version,
        retentionDays,
        concurrencyKey,
        priority,
        startAt,
        delay,
        deadline,
        debounceKey,
        debounceWindow,
        deadlineAt);
  }

  public StartOptions withVersion(int v) {
    return new StartOptions(
        idempotencyKey,
        v,
        retentionDays,
        concurrencyKey,
        priority,
        startAt,
        delay,
        deadline,
        debounceKey,
        debounceWindow,
        deadlineAt);
  }

  public StartOptions withRetentionDays(int days) {
    return new StartOptions(
        idempotencyKey,
        version,
        days,
        concurrencyKey,
        priority,
        startAt,
        delay,
        deadline,
        debounceKey,
        debounceWindow,
        deadlineAt);
  }
}
