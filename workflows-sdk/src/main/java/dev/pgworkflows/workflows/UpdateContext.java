package dev.pgworkflows.workflows;

/**
 * What an update's validator and handler see of the run they answer for: its identity, its state
 * (as the run's body last journaled it, with the changes of the updates answered before this one),
 * and its inbox.
 *
 * <p>A handler runs while the run's body does not: when the run sleeps or waits, or between two of
 * its tasks. Its changes of {@link #state()} are journaled with the update's answer, in one
 * transaction, and the body sees them from its next step on (and a replay sees them at the same
 * point). Its {@link #signal signals} go to the run's inbox as any signal does, so a handler can
 * end the body's wait. A validator only reads: a change of state or a signal from it is refused
 * with an {@link IllegalStateException}.
 */
public interface UpdateContext {
  /** The workflow's name. */
  String workflow();

  /** The run's id. */
  long runId();

  /** The update's name. */
  String update();

  /** The run's state, to read and (in a handler) change. */
  RunState state();

  /** Sends {@code payload} as event {@code event} to this run, once the update is answered. */
  void signal(String event, Object payload);
}
