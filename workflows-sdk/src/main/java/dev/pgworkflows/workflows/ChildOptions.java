package dev.pgworkflows.workflows;

import java.time.Duration;

/**
 * Options of a child run: the code version it runs (default: the newest a worker serves), what a
 * cancel of the parent does to it, its retention (never shorter than the parent's), and its flow
 * control as a start's (see {@link StartOptions}): a concurrency key, a priority and a deadline.
 */
public record ChildOptions(
    Integer version,
    OnParentCancel onParentCancel,
    Integer retentionDays,
    String concurrencyKey,
    Integer priority,
    Duration deadline) {
  public static final ChildOptions DEFAULT = new ChildOptions(null, OnParentCancel.CANCEL, null);

  /** What cancelling the parent does to a child that is still running. */
  public enum OnParentCancel {
    /** The child is cancelled with its parent (the default). */
    CANCEL,
    /** The child runs on by itself. */
    ABANDON
  }

  /** Options without flow control. */
  public ChildOptions(Integer version, OnParentCancel onParentCancel, Integer retentionDays) {
    this(version, onParentCancel, retentionDays, null, null, null);
  }

  public ChildOptions {
    if (version != null && version < 1) {
      throw new IllegalArgumentException("version must be >= 1");
    }
    if (retentionDays != null && retentionDays < 1) {
      throw new IllegalArgumentException("retention must be at least one day");
    }
    if (onParentCancel == null) {
      onParentCancel = OnParentCancel.CANCEL;
    }
    if (concurrencyKey != null && (concurrencyKey.isEmpty() || concurrencyKey.length() > 255)) {
      throw new IllegalArgumentException("concurrency key must be 1 to 255 characters");
    }
    if (priority != null && (priority < 0 || priority > 9)) {
      throw new IllegalArgumentException("priority must be between 0 and 9");
    }
    if (deadline != null
        && (deadline.toMillis() < 1 || deadline.compareTo(Duration.ofDays(365)) > 0)) {
      throw new IllegalArgumentException("deadline must be between a millisecond and a year");
    }
  }

  public ChildOptions withVersion(int v) {
    return new ChildOptions(v, onParentCancel, retentionDays, concurrencyKey, priority, deadline);
  }

  public ChildOptions withOnParentCancel(OnParentCancel policy) {
    return new ChildOptions(version, policy, retentionDays, concurrencyKey, priority, deadline);
  }

  public ChildOptions withRetentionDays(int days) {
    return new ChildOptions(version, onParentCancel, days, concurrencyKey, priority, deadline);
  }

  /**
   * These options with concurrency key {@code key}: the child counts against the limit of its
   * workflow's key (see {@link StartOptions#concurrencyKey}), and waits for a slot like any run.
   */
  public ChildOptions withConcurrencyKey(String key) {
    return new ChildOptions(version, onParentCancel, retentionDays, key, priority, deadline);
  }

  /** These options with priority {@code level}, 0 to 9 (see {@link StartOptions#withPriority}). */
  public ChildOptions withPriority(int level) {
    return new ChildOptions(
        version, onParentCancel, retentionDays, concurrencyKey, level, deadline);
  }

  /**
   * These options with a deadline {@code d} after the child starts: a child still running then is
   * ended by the server as {@link RunStatus#TIMED_OUT}, and the parent's wait for it ends with
   * {@link ChildFailedException}. A replay of the step gets the same child, deadline unchanged.
   */
  public ChildOptions withDeadline(Duration d) {
    return new ChildOptions(version, onParentCancel, retentionDays, concurrencyKey, priority, d);
  }
}
