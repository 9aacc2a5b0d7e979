package dev.pgworkflows.server.internal.workflow;

import dev.pgworkflows.server.internal.wait.LongPoll;
import dev.pgworkflows.server.internal.wait.Waiters;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts handed straight to a waiting poll. When a worker's poll for the workflow waits on this
 * server, the start leases the new runs' first messages to it in the start's own transaction (see
 * V023) and the poll answers with them at once: no NOTIFY, no wake-up, no receive. Without such a
 * poll, or for runs it does not take, a start goes the usual way.
 */
public final class HandedStarts {
  private final WorkflowStore store;
  private final LongPoll longPoll;

  public HandedStarts(WorkflowStore store, LongPoll longPoll) {
    this.store = store;
    this.longPoll = longPoll;
  }

  /**
   * Starts the runs, in one transaction, handing what a waiting poll takes to it.
   *
   * @return the answers in order, or null when no poll of this server waits for a run of these
   */
  List<WorkflowStore.Started> start(String name, List<WorkflowStore.BatchStart> items) {
    Waiters.Waiter poll =
        longPoll.claim(
            "__wf_" + name, terms -> terms instanceof WorkerRoutes.Terms t && takesAny(t, items));
    if (poll == null) {
      return null;
    }
    List<TaskView> tasks = new ArrayList<>();
    try {
      WorkerRoutes.Terms t = (WorkerRoutes.Terms) poll.terms();
      List<WorkflowStore.StartedTask> rows =
          store.startLeased(
              name, items, t.versions(), Math.min(t.max(), items.size()), t.leaseSeconds());
      List<WorkflowStore.Started> out = new ArrayList<>(rows.size());
      for (WorkflowStore.StartedTask r : rows) {
        out.add(r.started());
        if (r.task() != null) {
          tasks.add(r.task());
        }
      }
      return out;
    } finally {
      poll.give(tasks); // nothing, when the start failed: the poll goes back to receiving
    }
  }

  /**
   * Whether a poll on these terms may take one of the runs. A start without a version gets the
   * workflow's newest, which only the database knows: such a run may fit any poll.
   */
  private static boolean takesAny(WorkerRoutes.Terms t, List<WorkflowStore.BatchStart> items) {
    for (WorkflowStore.BatchStart b : items) {
      Integer v = b.start().version();
      if (v == null || t.versions().contains(v)) {
        return true;
      }
    }
    return false;
  }
}
