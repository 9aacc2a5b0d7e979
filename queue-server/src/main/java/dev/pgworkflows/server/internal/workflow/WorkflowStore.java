package dev.pgworkflows.server.internal.workflow;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.pgworkflows.server.internal.db.Sql;
import dev.pgworkflows.server.internal.http.Json;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The workflow functions of V003, called with parameters. */
public final class WorkflowStore {
  /** Result of a start: the run, its status, and whether this call created it. */
  public record Started(long runId, String status, boolean created) {}

  /** Result of a completion or retry; as a completion's answer, without the fields it lacks. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Completed(String outcome, Long messageId, String receipt) {}

  /** Result of a signal. */
  public record Signalled(boolean delivered, String reason, String workflow) {}

  /** Result of a cancel. */
  public record Cancelled(boolean cancelled, String status, String workflow) {}

  /** One line of the index. */
  public record Summary(String name, long running, long completed, long failed, long cancelled) {}

  private final Sql sql;
  private final int maxRetentionDays;

  public WorkflowStore(Sql sql, int maxRetentionDays) {
    this.sql = sql;
    this.maxRetentionDays = maxRetentionDays;
  }

  /** A checked start and the trace context its run is given. */
  public record BatchStart(WorkflowRoutes.CheckedStart start, String traceContext) {}

  public Started start(String name, WorkflowRoutes.CheckedStart c, String traceContext) {
    return sql.one(
            "SELECT * FROM queue.workflow_start(?, ?::jsonb, ?, ?, ?, ?, ?)",
            rs -> new Started(rs.getLong(1), rs.getString(2), rs.getBoolean(3)),
            name,
            c.input(),
            c.version(),
            c.idempotencyKey(),
            c.retentionDays(),
            maxRetentionDays,
            traceContext)
        .orElseThrow();
  }

  /** The starts in one transaction, answered in order. */
  public List<Started> startBatch(String name, List<BatchStart> items) {
    return sql.list(
        "SELECT run_id, status, created FROM queue.workflow_start_batch(?, ?::jsonb, ?) ORDER BY ord",
        rs -> new Started(rs.getLong(1), rs.getString(2), rs.getBoolean(3)),
        name,
        itemsJson(items),
        maxRetentionDays);
  }

  /** A start's answer and, when its run's first message was leased with it, the task for it. */
  public record StartedTask(Started started, TaskView task) {}

  /**
   * The starts in one transaction, as {@link #startBatch} (or {@link #start} for one), leasing the
   * first messages of up to {@code take} of the new runs whose version is in {@code versions} for
   * {@code leaseSeconds}, as a poll on those terms would (V023). Answered in order.
   */
  public List<StartedTask> startLeased(
      String name, List<BatchStart> items, List<Integer> versions, int take, int leaseSeconds) {
    String json = itemsJson(items);
    return sql.onConnection(
        c -> {
          Array arr = c.createArrayOf("int4", versions.toArray());
          return Sql.list(
              c,
              "SELECT * FROM queue.workflow_start_leased(?, ?::jsonb, ?::int[], ?, ?, ?)",
              rs -> {
                Started s =
                    new Started(
                        rs.getLong("run_id"), rs.getString("status"), rs.getBoolean("created"));
                long msg = rs.getLong("msg_id");
                if (rs.wasNull()) {
                  return new StartedTask(s, null);
                }
                TaskView task =
                    new TaskView(
                        s.runId(),
                        msg,
                        Long.toString(rs.getLong("receipt")),
                        rs.getInt("attempt"),
                        rs.getInt("version"),
                        rs.getString("reason"),
                        items.get(rs.getInt("ord") - 1).start().input(),
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
  private static String itemsJson(List<BatchStart> items) {
    StringBuilder json = new StringBuilder(items.size() * 64).append('[');
    for (int i = 0; i < items.size(); i++) {
      BatchStart b = items.get(i);
      // The input is JSON text already: spliced in rather than parsed and written again.
      json.append(i == 0 ? "{" : ",{")
          .append("\"input\":")
          .append(b.start().input())
          .append(",\"version\":")
          .append(b.start().version())
          .append(",\"retentionDays\":")
          .append(b.start().retentionDays())
          .append(",\"idempotencyKey\":")
          .append(Json.write(b.start().idempotencyKey()))
          .append(",\"traceContext\":")
          .append(Json.write(b.traceContext()))
          .append('}');
    }
    return json.append(']').toString();
  }

  public Optional<RunView> get(String name, long runId) {
    return sql.one(
        "SELECT * FROM queue.workflow_run WHERE run_id = ? AND workflow_name = ?",
        RunView::of,
        runId,
        name);
  }

  public List<RunView> list(
      String name,
      String status,
      Instant since,
      Instant until,
      String inputMatch,
      Long before,
      int limit) {
    return sql.list(
        "SELECT * FROM queue.workflow_list(?, ?::queue.workflow_status, ?, ?, ?::jsonb, ?, ?)",
        RunView::of,
        name,
        status,
        since == null ? null : Timestamp.from(since),
        until == null ? null : Timestamp.from(until),
        inputMatch,
        before,
        limit);
  }

  public String journal(long runId) {
    return sql.one("SELECT queue.workflow_journal(?)::text", rs -> rs.getString(1), runId)
        .orElseThrow();
  }

  public List<Summary> summary() {
    return sql.list(
        "SELECT * FROM queue.workflow_summary()",
        rs ->
            new Summary(
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

  public void registerVersions(String name, List<Integer> versions) {
    sql.onConnection(
        c -> {
          Array arr = c.createArrayOf("int4", versions.toArray());
          return Sql.list(
              c, "SELECT queue.workflow_register_versions(?, ?::int[])", rs -> null, name, arr);
        });
  }

  public List<TaskView> poll(String name, List<Integer> versions, int max, int leaseSeconds) {
    return sql.onConnection(
        c -> {
          Array arr = c.createArrayOf("int4", versions.toArray());
          return Sql.list(
              c,
              "SELECT * FROM queue.workflow_poll(?, ?::int[], ?, ?)",
              TaskView::of,
              name,
              arr,
              max,
              leaseSeconds);
        });
  }

  public Completed complete(WorkerRoutes.Checked c) {
    if (c.next() != null && Boolean.TRUE.equals(c.next().inline())) {
      // The inline path alone (V021), without workflow_complete_step's call around it; it answers
      // no row for a run that is not running, which the general path then answers.
      Optional<Completed> inline =
          sql.one(
              "SELECT * FROM queue.workflow_continue_step(?::bigint, ?::bigint, ?::bigint, ?, ?,"
                  + " ?::jsonb, ?::jsonb, ?, ?::jsonb, ?)",
              WorkflowStore::completed,
              completionArgs(c, true, false));
      if (inline.isPresent()) {
        return inline.get();
      }
    }
    return sql.one(
            "SELECT * FROM queue.workflow_complete_step(?::bigint, ?::bigint, ?::bigint, ?, ?,"
                + " ?::jsonb, ?::jsonb, ?, ?::jsonb, ?::jsonb, ?)",
            WorkflowStore::completed,
            completionArgs(c, true, true))
        .orElseThrow();
  }

  /** A row of (outcome, next_msg_id, next_receipt). */
  private static Completed completed(ResultSet rs) throws SQLException {
    long nextMsg = rs.getLong(2);
    Long msg = rs.wasNull() ? null : nextMsg;
    long nextReceipt = rs.getLong(3);
    String r = rs.wasNull() ? null : Long.toString(nextReceipt);
    return new Completed(rs.getString(1), msg, r);
  }

  /**
   * Completes a step that ends its run (a completion with a result), answering with what the run's
   * span and metrics need when it went through (V024).
   */
  public BatchOutcome completeEnded(WorkerRoutes.Checked c) {
    return sql.one(
            "SELECT * FROM queue.workflow_complete_ended(?::bigint, ?::bigint, ?::bigint, ?, ?,"
                + " ?::jsonb, ?::jsonb, ?, ?::jsonb, ?)",
            rs -> withRunEnd(new Completed(rs.getString("outcome"), null, null), rs),
            completionArgs(c, false, true))
        .orElseThrow();
  }

  /**
   * A lone completion's arguments, in the order of workflow_complete_step's parameters; without
   * {@code next} for workflow_complete_ended, which has none, and without {@code result} for
   * workflow_continue_step.
   */
  private static Object[] completionArgs(
      WorkerRoutes.Checked c, boolean withNext, boolean withResult) {
    WorkerRoutes.Step step = c.step();
    List<Object> args = new ArrayList<>(11);
    args.add(c.runId());
    args.add(c.messageId());
    args.add(c.receipt());
    args.add(step == null ? null : step.name());
    args.add(step == null ? null : step.kind());
    args.add(step == null || step.output() == null ? null : Json.write(step.output()));
    args.add(step == null || step.error() == null ? null : Json.write(step.error()));
    args.add(step == null || step.startedAt() == null ? null : Timestamp.from(step.startedAt()));
    if (withNext) {
      args.add(c.next() == null ? null : Json.write(c.next()));
    }
    if (withResult) {
      args.add(c.result() == null ? null : Json.write(c.result()));
    }
    args.add(c.lease());
    return args.toArray();
  }

  /** {@code completed} with the run's version, times and trace from the row, where it has them. */
  private static BatchOutcome withRunEnd(Completed completed, ResultSet rs) throws SQLException {
    int version = rs.getInt("version");
    Integer v = rs.wasNull() ? null : version;
    Timestamp started = rs.getTimestamp("started_at");
    Timestamp ended = rs.getTimestamp("completed_at");
    return new BatchOutcome(
        completed,
        null,
        v,
        started == null ? null : started.toInstant(),
        ended == null ? null : ended.toInstant(),
        rs.getString("trace_context"));
  }

  /**
   * One item's answer in a batch: the completion, or the refusal of a malformed item; for a run
   * that ended, what its run span and metrics need.
   */
  public record BatchOutcome(
      Completed completed,
      Map<String, Object> rejected,
      Integer version,
      Instant startedAt,
      Instant completedAt,
      String traceContext) {}

  /** Completes many steps of one workflow in one transaction; answers in input order. */
  public List<BatchOutcome> completeBatch(String name, List<WorkerRoutes.Checked> items) {
    List<Map<String, Object>> rows = new ArrayList<>(items.size());
    for (WorkerRoutes.Checked c : items) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("run_id", c.runId());
      row.put("msg_id", c.messageId());
      row.put("receipt", c.receipt());
      WorkerRoutes.Step step = c.step();
      if (step != null) {
        row.put("step_name", step.name());
        row.put("step_kind", step.kind());
        row.put("output", step.output());
        row.put("error", step.error());
        row.put("started_at", step.startedAt() == null ? null : step.startedAt().toString());
      }
      row.put("next", c.next());
      row.put("result", c.result());
      row.put("lease", c.lease());
      rows.add(row);
    }
    return sql.list(
        "SELECT * FROM queue.workflow_complete_batch(?, ?::jsonb)",
        rs -> {
          long nextMsg = rs.getLong("next_msg_id");
          Long msg = rs.wasNull() ? null : nextMsg;
          long nextReceipt = rs.getLong("next_receipt");
          String receipt = rs.wasNull() ? null : Long.toString(nextReceipt);
          return withRunEnd(new Completed(rs.getString("outcome"), msg, receipt), rs);
        },
        name,
        Json.write(rows));
  }

  public String retry(long runId, long messageId, long receipt, long delayMs) {
    return sql.one(
            "SELECT queue.workflow_retry(?::bigint, ?::bigint, ?::bigint, ?::bigint)",
            rs -> rs.getString(1),
            runId,
            messageId,
            receipt,
            delayMs)
        .orElseThrow();
  }

  public Optional<String> extendLease(long runId, long messageId, long receipt, int leaseSeconds) {
    return sql.one(
        "SELECT queue.workflow_extend_lease(?::bigint, ?::bigint, ?::bigint, ?)",
        rs -> {
          long r = rs.getLong(1);
          return rs.wasNull() ? null : Long.toString(r);
        },
        runId,
        messageId,
        receipt,
        leaseSeconds);
  }
}
