package dev.pgworkflows.server.internal.store;

import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.Task;
import dev.pgworkflows.protocol.WorkflowSummary;
import dev.pgworkflows.server.internal.json.Json;
import java.sql.Array;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** The run functions of the workflow engine: start, look up, list, signal, cancel. */
public final class RunStore {
  /** Result of a signal. */
  public record Signalled(boolean delivered, String reason, String workflow) {}

  /** Result of a cancel. */
  public record Cancelled(boolean cancelled, String status, String workflow) {}

  /** A start's answer and, when its run's first message was leased with it, the task for it. */
  public record StartedTask(StartResult started, Task task) {}

  private final Sql sql;
  private final int maxRetentionDays;

  public RunStore(Sql sql, int maxRetentionDays) {
    this.sql = sql;
    this.maxRetentionDays = maxRetentionDays;
  }

  public StartResult start(String name, NewRun r) {
    return sql.one(
            "SELECT * FROM queue.workflow_start(?, ?::jsonb, ?, ?, ?, ?, ?)",
            rs -> new StartResult(rs.getLong(1), rs.getString(2), rs.getBoolean(3)),
            name,
            r.input(),
            r.version(),
            r.idempotencyKey(),
            r.retentionDays(),
            maxRetentionDays,
            r.traceContext())
        .orElseThrow();
  }

  /** The starts in one transaction, answered in order. */
  public List<StartResult> startBatch(String name, List<NewRun> items) {
    return sql.list(
        "SELECT run_id, status, created FROM queue.workflow_start_batch(?, ?::jsonb, ?) ORDER BY ord",
        rs -> new StartResult(rs.getLong(1), rs.getString(2), rs.getBoolean(3)),
        name,
        itemsJson(items),
        maxRetentionDays);
  }

  /**
   * The starts in one transaction, as {@link #startBatch} (or {@link #start} for one), leasing the
   * first messages of up to {@code take} of the new runs whose version is in {@code versions} for
   * {@code leaseSeconds}, as a poll on those terms would ({@code workflow_start_leased}). Answered
   * in order.
   */
  public List<StartedTask> startLeased(
      String name, List<NewRun> items, List<Integer> versions, int take, int leaseSeconds) {
    String json = itemsJson(items);
    return sql.onConnection(
        c -> {
          Array arr = c.createArrayOf("int4", versions.toArray());
          return Sql.list(
              c,
              "SELECT * FROM queue.workflow_start_leased(?, ?::jsonb, ?::int[], ?, ?, ?)",
              rs -> {
                StartResult s =
                    new StartResult(
                        rs.getLong("run_id"), rs.getString("status"), rs.getBoolean("created"));
                long msg = rs.getLong("msg_id");
                if (rs.wasNull()) {
                  return new StartedTask(s, null);
                }
                Task task =
                    new Task(
                        s.runId(),
                        msg,
                        Long.toString(rs.getLong("receipt")),
                        rs.getInt("attempt"),
                        rs.getInt("version"),
                        rs.getString("reason"),
                        items.get(rs.getInt("ord") - 1).input(),
                        "[]", // the run began in this transaction: it has no steps yet
                        rs.getTimestamp("started_at").toInstant(),
                        rs.getString("trace_context"));
                return new StartedTask(s, task);
              },
              name,
              json,
              arr,
              take,
              leaseSeconds,
              maxRetentionDays);
        });
  }

  /** The starts as the batch functions take them. */
  private static String itemsJson(List<NewRun> items) {
    StringBuilder json = new StringBuilder(items.size() * 64).append('[');
    for (int i = 0; i < items.size(); i++) {
      NewRun r = items.get(i);
      // The input is JSON text already: spliced in rather than parsed and written again.
      json.append(i == 0 ? "{" : ",{")
          .append("\"input\":")
          .append(r.input())
          .append(",\"version\":")
          .append(r.version())
          .append(",\"retentionDays\":")
          .append(r.retentionDays())
          .append(",\"idempotencyKey\":")
          .append(Json.write(r.idempotencyKey()))
          .append(",\"traceContext\":")
          .append(Json.write(r.traceContext()))
          .append('}');
    }
    return json.append(']').toString();
  }

  public Optional<StoredRun> get(String name, long runId) {
    return sql.one(
        "SELECT * FROM queue.workflow_run WHERE run_id = ? AND workflow_name = ?",
        Rows::run,
        runId,
        name);
  }

  public List<Run> list(
      String name,
      String status,
      Instant since,
      Instant until,
      String inputMatch,
      Long before,
      int limit) {
    return sql.list(
        "SELECT * FROM queue.workflow_list(?, ?::queue.workflow_status, ?, ?, ?::jsonb, ?, ?)",
        rs -> Rows.run(rs).run(),
        name,
        status,
        since == null ? null : Timestamp.from(since),
        until == null ? null : Timestamp.from(until),
        inputMatch,
        before,
        limit);
  }

  /** The run's journal as JSON text. */
  public String journal(long runId) {
    return sql.one("SELECT queue.workflow_journal(?)::text", rs -> rs.getString(1), runId)
        .orElseThrow();
  }

  public List<WorkflowSummary> summary() {
    return sql.list(
        "SELECT * FROM queue.workflow_summary()",
        rs ->
            new WorkflowSummary(
                rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)));
  }

  public Signalled signal(long runId, String event, String payload) {
    return sql.one(
            "SELECT * FROM queue.workflow_signal(?::bigint, ?, ?::jsonb)",
            rs -> new Signalled(rs.getBoolean(1), rs.getString(2), rs.getString(3)),
            runId,
            event,
            payload)
        .orElseThrow();
  }

  public Cancelled cancel(long runId) {
    return sql.one(
            "SELECT * FROM queue.workflow_cancel(?::bigint)",
            rs -> new Cancelled(rs.getBoolean(1), rs.getString(2), rs.getString(3)),
            runId)
        .orElseThrow();
  }
}
