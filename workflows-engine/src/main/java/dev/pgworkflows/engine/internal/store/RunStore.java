package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.Signal;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.StartTiming;
import dev.pgworkflows.protocol.Task;
import dev.pgworkflows.protocol.UpdateResult;
import dev.pgworkflows.protocol.WorkflowSummary;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** The run functions of the workflow engine: start, look up, list, signal, cancel. */
public final class RunStore {
  /**
   * Result of a signal: {@code outcome} is delivered, buffered, duplicate, not running or no such
   * run; {@code signalId} is the stored signal's (the first one's for a duplicate), null when none.
   */
  public record Signalled(String outcome, Long signalId, String workflow) {}

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
            "SELECT * FROM queue.workflow_start(?, ?::jsonb, ?, ?, ?, ?, ?, ?::jsonb)",
            RunStore::startResult,
            name,
            r.input(),
            r.version(),
            r.idempotencyKey(),
            r.retentionDays(),
            maxRetentionDays,
            r.traceContext(),
            startFields(r))
        .orElseThrow();
  }

  /**
   * A start's answer from a row of {@code workflow_start} (or of a function answering as it does):
   * run_id, status, created, and what a concurrency strategy made of it.
   */
  private static StartResult startResult(ResultSet rs) throws SQLException {
    Array cancelled = rs.getArray("cancelled_runs");
    return new StartResult(
        rs.getLong("run_id"),
        rs.getString("status"),
        rs.getBoolean("created"),
        rs.getString("admission"),
        cancelled == null ? null : List.of((Long[]) cancelled.getArray()));
  }

  /** An update-with-start's answer: the update, and whether the start made its run. */
  public record UpdatedStart(UpdateResult update, boolean runCreated) {}

  /** Starts a run (or finds the one its key names) and sends it an update, in one transaction. */
  public UpdatedStart startWithUpdate(
      String name, NewRun r, String update, String input, String key) {
    return sql.one(
            "SELECT run_id, run_created, update_id, status, output::text, error::text, created"
                + " FROM queue.workflow_update_with_start(?, ?::jsonb, ?, ?, ?, ?, ?, ?::jsonb, ?,"
                + " ?::jsonb, ?)",
            rs ->
                new UpdatedStart(
                    new UpdateResult(
                        rs.getLong(3),
                        rs.getLong(1),
                        update,
                        rs.getString(4),
                        rs.getString(5),
                        rs.getString(6),
                        rs.getBoolean(7),
                        rs.getBoolean(2)),
                    rs.getBoolean(2)),
            name,
            r.input(),
            r.version(),
            r.idempotencyKey(),
            r.retentionDays(),
            maxRetentionDays,
            r.traceContext(),
            startFields(r),
            update,
            input,
            key)
        .orElseThrow();
  }

  /** The starts in one transaction, answered in order. */
  public List<StartResult> startBatch(String name, List<NewRun> items) {
    return sql.list(
        "SELECT run_id, status, created, admission, cancelled_runs"
            + " FROM queue.workflow_start_batch(?, ?::jsonb, ?) ORDER BY ord",
        RunStore::startResult,
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
                StartResult s = startResult(rs);
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
          .append(timingFields(r.timing()))
          .append(flowFields(r))
          .append('}');
    }
    return json.append(']').toString();
  }

  /** A single start's timing and flow fields as a JSON object, null when it has none. */
  private static String startFields(NewRun r) {
    String fields = timingFields(r.timing()) + flowFields(r);
    return fields.isEmpty() ? null : "{" + fields.substring(1) + "}";
  }

  /**
   * A start's concurrency key, priority and search attributes when set, each preceded by a comma.
   */
  private static String flowFields(NewRun r) {
    if (r.concurrencyKey() == null && r.priority() == null && r.attributes() == null) {
      return "";
    }
    StringBuilder json = new StringBuilder();
    field(json, "concurrencyKey", r.concurrencyKey());
    field(json, "priority", r.priority());
    if (r.attributes() != null) {
      json.append(",\"attributes\":").append(r.attributes());
    }
    return json.toString();
  }

  /** A start's timing fields that are set, each preceded by a comma. */
  private static String timingFields(StartTiming t) {
    if (!t.any()) {
      return "";
    }
    StringBuilder json = new StringBuilder();
    field(json, "startAt", t.startAt() == null ? null : t.startAt().toString());
    field(json, "delayMs", t.delayMs());
    field(json, "deadlineAt", t.deadlineAt() == null ? null : t.deadlineAt().toString());
    field(json, "deadlineMs", t.deadlineMs());
    field(json, "debounceKey", t.debounceKey());
    field(json, "debounceMs", t.debounceMs());
    return json.toString();
  }

  private static void field(StringBuilder json, String name, Object value) {
    if (value != null) {
      json.append(",\"").append(name).append("\":").append(Json.write(value));
    }
  }

  /** A child's parent's workflow, by key: a parent deleted by retention leaves it null. */
  static final String PARENT_WORKFLOW =
      "queue.workflow_name_of(r.parent_run_id) AS parent_workflow";

  /**
   * The last run of the chain {@code runId} belongs to (the run itself when it is in no chain): a
   * signal or cancel sent to a run that continued as new goes to it.
   */
  public Optional<StoredRun> chainLast(long runId) {
    return sql.one(
        "SELECT r.*, " + PARENT_WORKFLOW + " FROM queue.workflow_chain_last(?::bigint) r",
        Rows::run,
        runId);
  }

  public Optional<StoredRun> get(String name, long runId) {
    return sql.one(
        "SELECT r.*, " + PARENT_WORKFLOW + " FROM queue.workflow_get(?, ?::bigint) r",
        Rows::run,
        name,
        runId);
  }

  /** A page of runs ({@code workflow_list}); {@code parent} keeps only that run's children. */
  public List<Run> list(
      String name,
      String status,
      Instant since,
      Instant until,
      String inputMatch,
      Long before,
      int limit,
      Long parent) {
    return sql.list(
        "SELECT r.*, "
            + PARENT_WORKFLOW
            + " FROM queue.workflow_list(?, ?::queue.workflow_status, ?, ?, ?::jsonb, ?, ?, ?::bigint) r"
            + " ORDER BY r.run_id DESC",
        rs -> Rows.run(rs).run(),
        name,
        status,
        since == null ? null : Timestamp.from(since),
        until == null ? null : Timestamp.from(until),
        inputMatch,
        before,
        limit,
        parent);
  }

  /** The runs a run started, in start order ({@code workflow_children}). */
  public List<Run.Child> children(long runId) {
    return sql.list(
        "SELECT run_id, workflow_name, status, parent_step FROM queue.workflow_children(?::bigint)",
        rs -> new Run.Child(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4)),
        runId);
  }

  /**
   * Starts the child run of a parent's step, once per parent and step ({@code
   * workflow_start_child}); its retention is capped as a start's is, and at least its parent's.
   */
  public StartResult startChild(
      long parentRunId, String step, String workflow, NewRun child, String onParentCancel) {
    return sql.one(
            "SELECT run_id, status, created FROM queue.workflow_start_child(?::bigint, ?, ?,"
                + " ?::jsonb, ?::int, ?, ?::int, ?, ?, ?::jsonb)",
            rs -> new StartResult(rs.getLong(1), rs.getString(2), rs.getBoolean(3)),
            parentRunId,
            step,
            workflow,
            child.input(),
            child.version(),
            onParentCancel,
            child.retentionDays(),
            maxRetentionDays,
            child.traceContext(),
            startFields(child))
        .orElseThrow();
  }

  /** When a running run's first task is due, empty when it was due at once or has ended. */
  public Optional<Instant> dueAt(long runId) {
    return sql.one(
        "SELECT queue.workflow_due_at(?::bigint)",
        rs -> {
          Timestamp at = rs.getTimestamp(1);
          return at == null ? null : at.toInstant();
        },
        runId);
  }

  /** The run's journal as JSON text. */
  public String journal(long runId) {
    return sql.one("SELECT queue.workflow_journal(?)::text", rs -> rs.getString(1), runId)
        .orElseThrow();
  }

  /** The run's journal with the rows restarts set aside, each marked, as JSON text. */
  public String journalWithAside(long runId) {
    return sql.one(
            "SELECT queue.workflow_journal_with_aside(?::bigint)::text",
            rs -> rs.getString(1),
            runId)
        .orElseThrow();
  }

  public List<WorkflowSummary> summary() {
    return sql.list(
        "SELECT * FROM queue.workflow_summary()",
        rs ->
            new WorkflowSummary(
                rs.getString(1),
                rs.getLong(2),
                rs.getLong(3),
                rs.getLong(4),
                rs.getLong(5),
                rs.getLong(6),
                rs.getBoolean(7)));
  }

  /** Sends a signal ({@code workflow_signal}); {@code key} null for none. */
  public Signalled signal(long runId, String event, String payload, String key) {
    return sql.one(
            "SELECT outcome, signal_id, workflow_name FROM queue.workflow_signal(?::bigint, ?,"
                + " ?::jsonb, ?)",
            rs -> {
              long id = rs.getLong(2);
              return new Signalled(rs.getString(1), rs.wasNull() ? null : id, rs.getString(3));
            },
            runId,
            event,
            payload,
            key)
        .orElseThrow();
  }

  /** A run's signals in the order they were sent, buffered and delivered. */
  public List<Signal> signals(long runId) {
    return sql.list("SELECT * FROM queue.workflow_signals(?::bigint)", Rows::signal, runId);
  }

  /** A run that a deadline ended, or a child that its parent's deadline cancelled. */
  public record Expired(
      long runId,
      String workflow,
      int version,
      String status,
      Instant startedAt,
      Instant completedAt,
      String traceContext) {}

  /**
   * Ends up to {@code limit} running runs whose deadline has passed by {@code now} as timed_out
   * ({@code workflow_expire}); answers each run it ended, cancelled children included.
   */
  public List<Expired> expire(int limit, Instant now) {
    return sql.list(
        "SELECT * FROM queue.workflow_expire(?, ?)",
        rs ->
            new Expired(
                rs.getLong("run_id"),
                rs.getString("workflow_name"),
                rs.getInt("workflow_version"),
                rs.getString("status"),
                rs.getTimestamp("started_at").toInstant(),
                rs.getTimestamp("completed_at").toInstant(),
                rs.getString("trace_context")),
        limit,
        Timestamp.from(now));
  }

  public Cancelled cancel(long runId) {
    return sql.one(
            "SELECT * FROM queue.workflow_cancel(?::bigint)",
            rs -> new Cancelled(rs.getBoolean(1), rs.getString(2), rs.getString(3)),
            runId)
        .orElseThrow();
  }
}
