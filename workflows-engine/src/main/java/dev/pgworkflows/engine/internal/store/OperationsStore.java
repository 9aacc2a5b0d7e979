package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.protocol.WorkflowPause;
import java.sql.Timestamp;
import java.util.List;
import java.util.Optional;

/**
 * An operator's controls ({@code operations.sql}): pauses of workflows, runs and queue groups,
 * parked messages, restarts and forks.
 */
public final class OperationsStore {
  private final Sql sql;

  public OperationsStore(Sql sql) {
    this.sql = sql;
  }

  /** Pauses or resumes a workflow ({@code workflow_pause_set}). */
  public WorkflowPause pauseWorkflow(String name, boolean paused) {
    return sql.one(
            "SELECT * FROM queue.workflow_pause_set(?, ?)",
            rs -> {
              Timestamp at = rs.getTimestamp(3);
              return new WorkflowPause(
                  rs.getString(1), rs.getBoolean(2), at == null ? null : at.toInstant());
            },
            name,
            paused)
        .orElseThrow();
  }

  /** Pauses or resumes a run ({@code workflow_run_pause}). */
  public void pauseRun(long runId, boolean paused) {
    sql.one("SELECT queue.workflow_run_pause(?::bigint, ?)", rs -> rs.getString(1), runId, paused);
  }

  /** Restarts an ended run from a step; answers how many journal rows were set aside. */
  public int restart(long runId, String fromStep) {
    return sql.one(
            "SELECT queue.workflow_restart(?::bigint, ?)", rs -> rs.getInt(1), runId, fromStep)
        .orElseThrow();
  }

  /**
   * Forks a run from a step into a new run; {@code input} is JSON text, used when {@code
   * withInput}. Answers the new run's id.
   */
  public long fork(long runId, String fromStep, String input, boolean withInput) {
    return sql.one(
            "SELECT queue.workflow_fork(?::bigint, ?, ?::jsonb, ?)",
            rs -> rs.getLong(1),
            runId,
            fromStep,
            input,
            withInput)
        .orElseThrow();
  }

  /** Pauses or resumes a group of a queue ({@code group_pause_set}). */
  public void pauseGroup(String queue, String group, boolean paused) {
    sql.one("SELECT queue.group_pause_set(?, ?, ?)", rs -> rs.getBoolean(1), queue, group, paused);
  }

  /** Parks the oldest message of a group; empty when the group has none. */
  public Optional<ParkedView> park(String queue, String group) {
    return sql.one("SELECT * FROM queue.group_park(?, ?)", ParkedView::of, queue, group);
  }

  /** A page of a queue's parked messages after a parked-id cursor. */
  public List<ParkedView> parked(String queue, int limit, long after) {
    return sql.list(
        "SELECT * FROM queue.parked_list(?, ?, ?)", ParkedView::of, queue, limit, after);
  }

  /** Puts a parked message back at the end of its group; answers its new message id. */
  public long redrive(String queue, long parkedId) {
    return sql.one(
            "SELECT queue.parked_redrive(?, ?::bigint)", rs -> rs.getLong(1), queue, parkedId)
        .orElseThrow();
  }
}
