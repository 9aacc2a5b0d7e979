package dev.pgworkflows.workflows;

import java.time.Duration;
import java.util.Objects;

/**
 * Options of a child run, made with {@link #builder()}: the code version it runs (default: the
 * newest a worker serves), what a cancel of the parent does to it, its retention (never shorter
 * than the parent's), and its flow control as a start's (see {@link StartOptions}): a concurrency
 * key, a priority and a deadline. {@link Builder#build()} checks them, throwing {@link
 * IllegalArgumentException} naming the option.
 */
public final class ChildOptions {
  private final Integer version;
  private final OnParentCancel onParentCancel;
  private final Integer retentionDays;
  private final String concurrencyKey;
  private final Integer priority;
  private final Duration deadline;

  /** What cancelling the parent does to a child that is still running. */
  public enum OnParentCancel {
    /** The child is cancelled with its parent (the default). */
    CANCEL,
    /** The child runs on by itself. */
    ABANDON
  }

  private ChildOptions(Builder b) {
    this.version = b.version;
    this.onParentCancel = b.onParentCancel;
    this.retentionDays = b.retentionDays;
    this.concurrencyKey = b.concurrencyKey;
    this.priority = b.priority;
    this.deadline = b.deadline;
  }

  /** A builder with no option set. */
  public static Builder builder() {
    return new Builder();
  }

  public Integer version() {
    return version;
  }

  public OnParentCancel onParentCancel() {
    return onParentCancel;
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

  public Duration deadline() {
    return deadline;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ChildOptions c
        && Objects.equals(version, c.version)
        && onParentCancel == c.onParentCancel
        && Objects.equals(retentionDays, c.retentionDays)
        && Objects.equals(concurrencyKey, c.concurrencyKey)
        && Objects.equals(priority, c.priority)
        && Objects.equals(deadline, c.deadline);
  }

  @Override
  public int hashCode() {
    return Objects.hash(version, onParentCancel, retentionDays, concurrencyKey, priority, deadline);
  }

  @Override
  public String toString() {
    return "ChildOptions[version="
        + version
        + ", onParentCancel="
        + onParentCancel
        + ", retentionDays="
        + retentionDays
        + ", concurrencyKey="
        + concurrencyKey
        + ", priority="
        + priority
        + ", deadline="
        + deadline
        + "]";
  }

  /** Sets options one by one; {@link #build()} checks them together. Not thread-safe. */
  public static final class Builder {
    private Integer version;
    private OnParentCancel onParentCancel = OnParentCancel.CANCEL;
    private Integer retentionDays;
    private String concurrencyKey;
    private Integer priority;
    private Duration deadline;

    private Builder() {}

    /** Runs the child on code version {@code v} (1 or more). */
    public Builder version(int v) {
      this.version = v;
      return this;
    }

    /** What a cancel of the parent does to the child; {@link OnParentCancel#CANCEL} by default. */
    public Builder onParentCancel(OnParentCancel policy) {
      if (policy == null) {
        throw new IllegalArgumentException("onParentCancel must not be null");
      }
      this.onParentCancel = policy;
      return this;
    }

    /** Keeps the ended child {@code days} days (1 or more; never less than its parent). */
    public Builder retentionDays(int days) {
      this.retentionDays = days;
      return this;
    }

    /**
     * Gives the child concurrency key {@code key}: it counts against the limit of its workflow's
     * key (see {@link StartOptions.Builder#concurrencyKey}), and waits for a slot like any run.
     */
    public Builder concurrencyKey(String key) {
      this.concurrencyKey = key;
      return this;
    }

    /** Priority {@code level}, 0 to 9 (see {@link StartOptions.Builder#priority}). */
    public Builder priority(int level) {
      this.priority = level;
      return this;
    }

    /**
     * A deadline {@code d} after the child starts: a child still running then is ended by the
     * server as {@link RunStatus#TIMED_OUT}, and the parent's wait for it ends with {@link
     * ChildFailedException}. A replay of the step gets the same child, deadline unchanged.
     */
    public Builder deadline(Duration d) {
      this.deadline = d;
      return this;
    }

    /** The options, checked together. */
    public ChildOptions build() {
      OptionRules.check(version, retentionDays, concurrencyKey, priority, deadline);
      return new ChildOptions(this);
    }
  }
}
