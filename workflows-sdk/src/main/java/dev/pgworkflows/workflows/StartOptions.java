package dev.pgworkflows.workflows;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Options of a start, made with {@link #builder()}. An idempotency key makes repeated starts return
 * the first run; a version pins the run to that code version (default: the newest a worker serves);
 * retention overrides the default 30 days, clamped by the server's ceiling; a concurrency key and a
 * priority are flow control; a start time or a delay, a deadline and a debounce are its timing;
 * search attributes are set on the new run. Each is checked when {@link Builder#build()} is called,
 * which throws {@link IllegalArgumentException} naming the option.
 *
 * <pre>{@code
 * StartOptions options =
 *     StartOptions.builder().idempotencyKey("order-42").concurrencyKey("acme").priority(5).build();
 * }</pre>
 */
public final class StartOptions {
  /** No options: the start is due at once, with the workflow's defaults. */
  static final StartOptions NONE = builder().build();

  private final String idempotencyKey;
  private final Integer version;
  private final Integer retentionDays;
  private final String concurrencyKey;
  private final Integer priority;
  private final Instant startAt;
  private final Duration delay;
  private final Duration deadline;
  private final Instant deadlineAt;
  private final String debounceKey;
  private final Duration debounceWindow;
  private final Map<String, Object> attributes;

  private StartOptions(Builder b) {
    this.idempotencyKey = b.idempotencyKey;
    this.version = b.version;
    this.retentionDays = b.retentionDays;
    this.concurrencyKey = b.concurrencyKey;
    this.priority = b.priority;
    this.startAt = b.startAt;
    this.delay = b.delay;
    this.deadline = b.deadline;
    this.deadlineAt = b.deadlineAt;
    this.debounceKey = b.debounceKey;
    this.debounceWindow = b.debounceWindow;
    this.attributes = b.attributes;
  }

  /** A builder with no option set. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these options, to change some of them. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.idempotencyKey = idempotencyKey;
    b.version = version;
    b.retentionDays = retentionDays;
    b.concurrencyKey = concurrencyKey;
    b.priority = priority;
    b.startAt = startAt;
    b.delay = delay;
    b.deadline = deadline;
    b.deadlineAt = deadlineAt;
    b.debounceKey = debounceKey;
    b.debounceWindow = debounceWindow;
    b.attributes = attributes;
    return b;
  }

  /**
   * These options with a definition's retention and deadline where they set none: what a start of a
   * {@link Workflow} sends, over HTTP, JDBC or a caller's transaction alike.
   */
  StartOptions withDefaultsOf(Workflow<?, ?> workflow) {
    Builder b = toBuilder();
    if (retentionDays == null) {
      b.retentionDays = (int) workflow.retention().toDays();
    }
    if (deadline == null && deadlineAt == null && workflow.deadline() != null) {
      b.deadline = workflow.deadline();
    }
    return b.build();
  }

  public String idempotencyKey() {
    return idempotencyKey;
  }

  public Integer version() {
    return version;
  }

  public Integer retentionDays() {
    return retentionDays;
  }

  public String concurrencyKey() {
    return concurrencyKey;
  }

  public Integer priority() {
    return priority;
  }

  public Instant startAt() {
    return startAt;
  }

  public Duration delay() {
    return delay;
  }

  public Duration deadline() {
    return deadline;
  }

  public Instant deadlineAt() {
    return deadlineAt;
  }

  public String debounceKey() {
    return debounceKey;
  }

  public Duration debounceWindow() {
    return debounceWindow;
  }

  /** The new run's search attributes, null for none. */
  public Map<String, Object> attributes() {
    return attributes;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StartOptions s
        && Objects.equals(idempotencyKey, s.idempotencyKey)
        && Objects.equals(version, s.version)
        && Objects.equals(retentionDays, s.retentionDays)
        && Objects.equals(concurrencyKey, s.concurrencyKey)
        && Objects.equals(priority, s.priority)
        && Objects.equals(startAt, s.startAt)
        && Objects.equals(delay, s.delay)
        && Objects.equals(deadline, s.deadline)
        && Objects.equals(deadlineAt, s.deadlineAt)
        && Objects.equals(debounceKey, s.debounceKey)
        && Objects.equals(debounceWindow, s.debounceWindow)
        && Objects.equals(attributes, s.attributes);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        idempotencyKey,
        version,
        retentionDays,
        concurrencyKey,
        priority,
        startAt,
        delay,
        deadline,
        deadlineAt,
        debounceKey,
        debounceWindow,
        attributes);
  }

  @Override
  public String toString() {
    return "StartOptions[idempotencyKey="
        + idempotencyKey
        + ", version="
        + version
        + ", retentionDays="
        + retentionDays
        + ", concurrencyKey="
        + concurrencyKey
        + ", priority="
        + priority
        + ", startAt="
        + startAt
        + ", delay="
        + delay
        + ", deadline="
        + deadline
        + ", deadlineAt="
        + deadlineAt
        + ", debounceKey="
        + debounceKey
        + ", debounceWindow="
        + debounceWindow
        + ", attributes="
        + attributes
        + "]";
  }

  /** Sets options one by one; {@link #build()} checks them together. Not thread-safe. */
  public static final class Builder {
    private String idempotencyKey;
    private Integer version;
    private Integer retentionDays;
    private String concurrencyKey;
    private Integer priority;
    private Instant startAt;
    private Duration delay;
    private Duration deadline;
    private Instant deadlineAt;
    private Map<String, Object> attributes;
    private String debounceKey;
    private Duration debounceWindow;

    private Builder() {}

    /** Repeated starts with this key (1 to 255 characters) return the first run. */
    public Builder idempotencyKey(String key) {
      this.idempotencyKey = key;
      return this;
    }

    /** Pins the run to code version {@code v} (1 or more). */
    public Builder version(int v) {
      this.version = v;
      return this;
    }

    /** Keeps the ended run {@code days} days (1 or more; the server caps it at its ceiling). */
    public Builder retentionDays(int days) {
      this.retentionDays = days;
      return this;
    }

    /**
     * Gives the run concurrency key {@code key} (1 to 255 characters): at most the workflow's
     * concurrency limit of the key's runs run at once (see {@link Workflows#setConcurrencyLimit}),
     * and the key's rate limit and {@link RateLimited} suspensions apply to it.
     */
    public Builder concurrencyKey(String key) {
      this.concurrencyKey = key;
      return this;
    }

    /**
     * Priority {@code level}, 0 (the default) to 9: due runs of a higher priority are handed out
     * first; each level counts as a minute of waiting, so an older run of a lower priority still
     * goes first once it has waited that much longer.
     */
    public Builder priority(int level) {
      this.priority = level;
      return this;
    }

    /**
     * The run's first task is due at {@code at} (at most a year ahead; a time past means now). The
     * run exists at once: it can be read, listed and cancelled meanwhile. Not with {@link #delay}.
     */
    public Builder startAt(Instant at) {
      this.startAt = at;
      return this;
    }

    /** The run's first task is due {@code d} after the start (at most a year). */
    public Builder delay(Duration d) {
      this.delay = d;
      return this;
    }

    /**
     * The server ends the run as {@link RunStatus#TIMED_OUT} should it still be running {@code d}
     * after it was due (a millisecond to a year); its workers find out on their next write or
     * heartbeat ({@link WorkflowContext#cancellation()}). It overrides the definition's {@link
     * Workflow.Builder#deadline}. Not with {@link #deadlineAt}.
     */
    public Builder deadline(Duration d) {
      this.deadline = d;
      return this;
    }

    /**
     * The server ends the run as {@link RunStatus#TIMED_OUT} should it still be running at {@code
     * at} (later than the run is due, at most a year after), as {@link #deadline} does. The server
     * refuses a time already past with {@link ApiException} (400, field {@code deadlineAt}).
     */
    public Builder deadlineAt(Instant at) {
      if (at == null) {
        throw new IllegalArgumentException("deadline time must not be null");
      }
      this.deadlineAt = at;
      return this;
    }

    /**
     * A trailing debounce: starts of the workflow with the same {@code key} within {@code window}
     * collapse into one run with the latest input, answered with the same run and {@link
     * Started#debounced()}. Each such start pushes the run's first task to now plus the window, but
     * never later than ten windows after the first start; once the run has begun, the key starts a
     * new run. Not with a delay, a start time or an idempotency key.
     */
    public Builder debounce(String key, Duration window) {
      this.debounceKey = key;
      this.debounceWindow = window;
      return this;
    }

    /**
     * Search attributes of the new run ({@link Runs#search}): each must be defined ({@link
     * Runs#defineAttribute}) and its value of its type (a string, a list of strings, a number, a
     * boolean, an {@link Instant}), else the start throws {@link ApiException} (400) and makes no
     * run. A start that finds an earlier run by its key leaves that run's attributes.
     */
    public Builder attributes(Map<String, ?> values) {
      this.attributes =
          values == null ? null : Collections.unmodifiableMap(new LinkedHashMap<>(values));
      return this;
    }

    /** The options, checked together. */
    public StartOptions build() {
      check();
      return new StartOptions(this);
    }

    private void check() {
      if (idempotencyKey != null && (idempotencyKey.isEmpty() || idempotencyKey.length() > 255)) {
        throw new IllegalArgumentException("idempotency key must be 1 to 255 characters");
      }
      OptionRules.check(version, retentionDays, concurrencyKey, priority, deadline);
      if (startAt != null && delay != null) {
        throw new IllegalArgumentException("give a start time or a delay, not both");
      }
      if (delay != null && (delay.isNegative() || delay.compareTo(OptionRules.ONE_YEAR) > 0)) {
        throw new IllegalArgumentException("delay must be between zero and a year");
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
  }
}
