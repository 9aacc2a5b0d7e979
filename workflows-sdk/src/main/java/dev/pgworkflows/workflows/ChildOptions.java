package dev.pgworkflows.workflows;

/**
 * Options of a child run: the code version it runs (default: the newest a worker serves), what a
 * cancel of the parent does to it, and its retention (never shorter than the parent's).
 */
public record ChildOptions(Integer version, OnParentCancel onParentCancel, Integer retentionDays) {
  public static final ChildOptions DEFAULT = new ChildOptions(null, OnParentCancel.CANCEL, null);

  /** What cancelling the parent does to a child that is still running. */
  public enum OnParentCancel {
    /** The child is cancelled with its parent (the default). */
    CANCEL,
    /** The child runs on by itself. */
    ABANDON
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
  }

  public ChildOptions withVersion(int v) {
    return new ChildOptions(v, onParentCancel, retentionDays);
  }

  public ChildOptions withOnParentCancel(OnParentCancel policy) {
    return new ChildOptions(version, policy, retentionDays);
  }

  public ChildOptions withRetentionDays(int days) {
    return new ChildOptions(version, onParentCancel, days);
  }
}
