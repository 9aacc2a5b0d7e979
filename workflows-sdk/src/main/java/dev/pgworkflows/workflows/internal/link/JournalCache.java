package dev.pgworkflows.workflows.internal.link;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.pgworkflows.protocol.JournalTail;
import dev.pgworkflows.workflows.internal.replay.Task;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The journals of the runs a worker served last, so a run that comes back receives only the rows
 * written since: the worker asks for tasks with {@code journalMax} {@link #INLINE_MAX}, the engine
 * withholds a longer journal from the task, and the worker asks for the rows after the last one it
 * holds ({@link WorkerTransport#journalTail}). A run restarted from an earlier step no longer has
 * that row as it was, and its whole journal comes again.
 */
public final class JournalCache {
  /** Journals up to this many rows come with their tasks; longer ones are kept here. */
  public static final int INLINE_MAX = 32;

  /** Runs kept, least recently served dropped first. */
  private static final int RUNS = 256;

  private record Held(List<Task.Entry> rows, int lastSeq, Instant lastCompletedAt) {}

  private final WorkerTransport link;
  private final String workflow;

  private final Map<Long, Held> held =
      new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Held> eldest) {
          return size() > RUNS;
        }
      };

  public JournalCache(WorkerTransport link, String workflow) {
    this.link = link;
    this.workflow = workflow;
  }

  /** The task, its journal filled in from what is kept and the rows it lacks when withheld. */
  public Task fill(Task task) {
    return task.journal() != null ? task : task.withJournal(journal(task.runId()));
  }

  private List<Task.Entry> journal(long runId) {
    Held h;
    synchronized (held) {
      h = held.get(runId);
    }
    JournalTail tail =
        link.journalTail(
            workflow,
            runId,
            h == null ? null : h.lastSeq(),
            h == null ? null : h.lastCompletedAt());
    List<Task.Entry> rows;
    try {
      List<Task.Entry> added = Task.entries(tail.journal());
      if (tail.whole() || h == null) {
        rows = added;
      } else {
        rows = new ArrayList<>(h.rows().size() + added.size());
        rows.addAll(h.rows());
        rows.addAll(added);
      }
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a run's journal does not read: " + e.getMessage(), e);
    }
    rows = List.copyOf(rows);
    synchronized (held) {
      if (tail.lastSeq() == null) {
        held.remove(runId);
      } else {
        held.put(runId, new Held(rows, tail.lastSeq(), tail.lastCompletedAt()));
      }
    }
    return rows;
  }
}
