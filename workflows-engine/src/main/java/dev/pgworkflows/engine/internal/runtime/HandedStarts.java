package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.NewRun;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Starts handed straight to a waiting poll. When a worker's poll for the workflow waits on this
 * server, the start leases the new runs' first messages to it in the start's own transaction (see
 * {@code workflow_start_leased} in sql/functions/workflow_start.sql) and the poll answers with them
 * at once: no NOTIFY, no wake-up, no receive. Without such a poll, or for runs it does not take, a
 * start goes the usual way.
 *
 * <p>A waiting task stream or poll with room for {@link #ROOMY} runs or more is handed runs
 * whenever it waits, streams first. One with less room only once it has waited a while: it belongs
 * to a busy worker, which gains more from taking many runs in one receive after a wake-up than from
 * one run now (handing every start to any poll that had just begun to wait cost a burn-down a fifth
 * of its throughput, and with less than 10 ms of waiting still a fourteenth).
 */
public final class HandedStarts {
  /** How long a poll must have waited to be handed runs. */
  private static final long MIN_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** A stream or poll waiting with room for this many runs is handed them without that wait. */
  private static final int ROOMY = 8;

  private final RunStore store;
  private final LongPoll longPoll;

  public HandedStarts(RunStore store, LongPoll longPoll) {
    this.store = store;
    this.longPoll = longPoll;
  }

  /**
   * Starts the runs, in one transaction, handing what a waiting poll takes to it.
   *
   * @return the answers in order, or null when no poll of this server waits for a run of these
   */
  public List<StartResult> start(String name, List<NewRun> items) {
    String queue = Names.workflowQueue(name);
    // A roomy waiting task stream or poll first (a stream's credit and a poll's max are the
    // worker's free slots), as soon as it waits. Then one that has waited a while.
    Waiters.Waiter poll =
        longPoll.claim(
            queue,
            0,
            terms ->
                terms instanceof TaskStream.Claim c
                    ? c.terms().max() >= ROOMY && c.stream().open() && takesAny(c.terms(), items)
                    : terms instanceof PollTerms t && t.max() >= ROOMY && takesAny(t, items));
    if (poll == null) {
      poll =
          longPoll.claim(
              queue,
              MIN_WAIT_NANOS,
              terms ->
                  terms instanceof TaskStream.Claim c
                      ? c.stream().open() && takesAny(c.terms(), items)
                      : terms instanceof PollTerms t && takesAny(t, items));
    }
    if (poll == null) {
      return null;
    }
    List<Task> tasks = new ArrayList<>();
    try {
      PollTerms t =
          poll.terms() instanceof TaskStream.Claim c ? c.terms() : (PollTerms) poll.terms();
      List<RunStore.StartedTask> rows =
          store.startLeased(
              name, items, t.versions(), Math.min(t.max(), items.size()), t.leaseSeconds());
      List<StartResult> out = new ArrayList<>(rows.size());
      for (RunStore.StartedTask r : rows) {
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
  private static boolean takesAny(PollTerms t, List<NewRun> items) {
    for (NewRun b : items) {
      Integer v = b.version();
      if (v == null || t.versions().contains(v)) {
        return true;
      }
    }
    return false;
  }
}
