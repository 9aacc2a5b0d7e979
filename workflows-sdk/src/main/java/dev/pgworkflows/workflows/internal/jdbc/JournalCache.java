package dev.pgworkflows.workflows.internal.jdbc;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.engine.internal.store.TaskStore.JournalTail;
import dev.pgworkflows.workflows.internal.replay.Task;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The journals of the runs a JDBC worker served last, so a run that comes back receives only the
 * rows written since: the engine withholds a journal longer than {@link #INLINE_MAX} rows from a
 * task, and the worker asks for the rows after the last one it holds. A run restarted from an
 * earlier step no longer has that row as it was, and its whole journal comes again.
 */
final class JournalCache {
  /** Journals up to this many rows come with their tasks; longer ones are kept here. */
  static final int INLINE_MAX = 32;

  /** Runs kept, least recently served dropped first. */
  private static final int RUNS = 256;

  private record Held(List<Task.Entry> rows, int lastSeq, OffsetDateTime lastCompletedAt) {}

  private final WorkerCalls calls;

  private final Map<Long, Held> held =
      new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Held> eldest) {
          return size() > RUNS;
        }
      };

  JournalCache(WorkerCalls calls) {
    this.calls = calls;
  }

  /** The tasks, each withheld journal filled in from what is kept and the rows it lacks. */
  List<Task> fill(List<Task> tasks) {
    List<Task> out = null;
    for (int i = 0; i < tasks.size(); i++) {
      Task t = tasks.get(i);
      if (t.journal() == null) {
        if (out == null) {
          out = new ArrayList<>(tasks);
        }
        out.set(i, t.withJournal(journal(t.runId())));
      }
    }
    return out == null ? tasks : out;
  }

  private List<Task.Entry> journal(long runId) {
    Held h;
    synchronized (held) {
      h = held.get(runId);
    }
    JournalTail tail =
        EngineErrors.call(
            () ->
                calls.journalAfter(
                    runId, h == null ? null : h.lastSeq(), h == null ? null : h.lastCompletedAt()));
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
