package dev.pgworkflows.workflows.internal.replay;

/**
 * Unwinds a workflow body once its run has been handed back to the queue (sleeping, waiting,
 * retrying later, released, paused, or no longer ours). An Error, not an Exception, so that
 * ordinary {@code catch (Exception e)} in workflow code does not swallow it.
 */
public final class Suspend extends Error {
  private static final long serialVersionUID = 1L;

  /** Why the body stopped. */
  public enum Why {
    SLEEPING,
    WAITING,
    RETRYING,
    RELEASED,
    LEASE_LOST,
    /** An operator paused the run or its workflow: the server took the run back after a step. */
    PAUSED,
    /**
     * A replay without a server ({@link ReplayOnly}) reached the end of its journal: the body's
     * next act would be a write, which its lease refuses.
     */
    JOURNAL_END,
    /** The run ended and its successor started (continue-as-new). */
    CONTINUED_AS_NEW,
    /** The next step needs labels this worker lacks: its task went to workers that have them. */
    ROUTED
  }

  private final Why why;

  public Suspend(Why why) {
    super(why.name(), null, false, false);
    this.why = why;
  }

  public Why why() {
    return why;
  }
}
