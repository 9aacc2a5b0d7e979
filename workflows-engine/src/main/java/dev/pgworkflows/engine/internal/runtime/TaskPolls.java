package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.TaskStore;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.Task;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A worker's poll for tasks: a receive now, or a long poll that a start on this server may hand its
 * runs to ({@link HandedStarts}). Registers the versions the worker runs.
 */
public final class TaskPolls {
  private final TaskStore store;
  private final LongPoll longPoll;
  private final VersionRegistry versions;

  public TaskPolls(TaskStore store, LongPoll longPoll, VersionRegistry versions) {
    this.store = store;
    this.longPoll = longPoll;
    this.versions = versions;
  }

  /**
   * Tasks on these terms, waiting up to {@code waitSeconds} for some; without a wait, or when the
   * first receive finds some, the future is complete on return.
   */
  public CompletableFuture<List<Task>> poll(String name, PollTerms terms, int waitSeconds) {
    versions.register(name, terms.versions());
    if (waitSeconds == 0) {
      return CompletableFuture.completedFuture(receive(name, terms));
    }
    return longPoll.poll(
        Names.workflowQueue(name),
        terms.waitKey(),
        terms,
        waitSeconds * 1000L,
        terms.max(),
        () -> receive(name, terms));
  }

  private List<Task> receive(String name, PollTerms terms) {
    return terms.receive(store, name);
  }
}
