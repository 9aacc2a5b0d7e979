package dev.pgworkflows.workflows.internal.replay;

/**
 * Points in a step's completion that tests can observe: between a step returning and its completion
 * being sent, and right after the completion committed. The reliability suite halts a worker JVM at
 * these points; production workers use {@link #NONE}.
 */
public interface CompletionHook {
  CompletionHook NONE = new CompletionHook() {};

  /** A new step returned; its completion is not sent yet. */
  default void stepReturned(String step) {}

  /** A step's completion committed on the server. */
  default void completionCommitted(String step) {}
}
