package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.protocol.CompletionOutcome;
import dev.pgworkflows.protocol.JournalOutcome;
import dev.pgworkflows.protocol.JournalTail;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.protocol.Task;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** The worker protocol's functions: lease tasks, complete steps, retry, extend leases. */
public final class TaskStore {
  private final Sql sql;

  public TaskStore(Sql sql) {
    this.sql = sql;
  }

  public void registerVersions(String name, List<Integer> versions) {
    sql.onConnection(
        c -> {
          Array arr = c.createArrayOf("int4", versions.toArray());
          return Sql.list(
              c, "SELECT queue.workflow_register_versions(?, ?::int[])", rs -> null, name, arr);
        });
  }

  /**
   * Leases up to {@code max} tasks of these versions ({@code workflow_poll}); a journal of more
   * than {@code journalMax} rows is withheld (null), null: never. {@code worker} (null: unnamed)
   * polls with {@code labels}: a workflow's routing may keep tasks from it or give it others.
   */
  public List<Task> poll(
      String name,
      List<Integer> versions,
      int max,
      int leaseSeconds,
      Integer journalMax,
      String worker,
      Map<String, String> labels) {
    return sql.onConnection(
        c -> {
          Array arr = c.createArrayOf("int4", versions.toArray());
          return Sql.list(
              c,
              "SELECT * FROM queue.workflow_poll(?, ?::int[], ?, ?, ?::int, NULL, ?, ?::jsonb)",
              Rows::task,
              name,
              arr,
              max,
              leaseSeconds,
              journalMax,
              worker,
              labels.isEmpty() ? null : Json.write(new TreeMap<>(labels)));
        });
  }

  /**
   * The rows of a run's journal after the row {@code seq} completed at {@code completedAt}, or the
   * whole journal when that row is gone or {@code seq} is null ({@code workflow_journal_after}).
   */
  public JournalTail journalAfter(long runId, Integer seq, Instant completedAt) {
    return sql.one(
            "SELECT whole, journal::text, last_seq, last_completed_at"
                + " FROM queue.workflow_journal_after(?::bigint, ?::integer,"
                + " ?::timestamp with time zone)",
            rs -> {
              int last = rs.getInt(3);
              Integer lastSeq = rs.wasNull() ? null : last;
              OffsetDateTime lastAt = rs.getObject(4, OffsetDateTime.class);
              return new JournalTail(
                  rs.getBoolean(1),
                  rs.getString(2),
                  lastSeq,
                  lastAt == null ? null : lastAt.toInstant());
            },
            runId,
            seq,
            completedAt == null ? null : completedAt.atOffset(ZoneOffset.UTC))
        .orElseThrow();
  }

  /** Completes a step that continues its run (a completion with {@code next}). */
  public CompletionOutcome complete(StepCompletion c) {
    if (c.next() != null && Boolean.TRUE.equals(c.next().inline())) {
      // The inline path alone (workflow_continue_step), without workflow_complete_step's call
      // around it; it answers no row for a run that is not running, which the general path then
      // answers.
      Optional<CompletionOutcome> inline =
          sql.one(
              "SELECT * FROM queue.workflow_continue_step(?::bigint, ?::bigint, ?::bigint, ?, ?,"
                  + " ?::jsonb, ?::jsonb, ?, ?::jsonb, ?, ?::jsonb)",
              TaskStore::outcome,
              completionArgs(c, true, false));
      if (inline.isPresent()) {
        return inline.get();
      }
    }
    return sql.one(
            "SELECT * FROM queue.workflow_complete_step(?::bigint, ?::bigint, ?::bigint, ?, ?,"
                + " ?::jsonb, ?::jsonb, ?, ?::jsonb, ?::jsonb, ?, ?::jsonb)",
            TaskStore::outcome,
            completionArgs(c, true, true))
        .orElseThrow();
  }

  /** A row of (outcome, next_msg_id, next_receipt). */
  private static CompletionOutcome outcome(ResultSet rs) throws SQLException {
    long nextMsg = rs.getLong(2);
    Long msg = rs.wasNull() ? null : nextMsg;
    long nextReceipt = rs.getLong(3);
    String r = rs.wasNull() ? null : Long.toString(nextReceipt);
    return CompletionOutcome.went(rs.getString(1), msg, r);
  }

  /**
   * Completes a step that ends its run (a completion with a result), answering with what the run's
   * span and metrics need when it went through ({@code workflow_complete_ended}).
   */
  public CompletionResult completeEnded(StepCompletion c) {
    return sql.one(
            "SELECT * FROM queue.workflow_complete_ended(?::bigint, ?::bigint, ?::bigint, ?, ?,"
                + " ?::jsonb, ?::jsonb, ?, ?::jsonb, ?, ?::jsonb)",
            rs -> new CompletionResult(CompletionOutcome.of(rs.getString("outcome")), runEnd(rs)),
            completionArgs(c, false, true))
        .orElseThrow();
  }

  /**
   * A lone completion's arguments, in the order of workflow_complete_step's parameters; without
   * {@code next} for workflow_complete_ended, which has none, and without {@code result} for
   * workflow_continue_step.
   */
  private static Object[] completionArgs(StepCompletion c, boolean withNext, boolean withResult) {
    StepRecord step = c.step();
    List<Object> args = new ArrayList<>(12);
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
    args.add(step == null || step.state() == null ? null : Json.write(step.state()));
    return args.toArray();
  }

  /** The run's version, times and trace from the row, where it has them. */
  private static RunEnd runEnd(ResultSet rs) throws SQLException {
    int version = rs.getInt("version");
    Integer v = rs.wasNull() ? null : version;
    Timestamp started = rs.getTimestamp("started_at");
    Timestamp ended = rs.getTimestamp("completed_at");
    return new RunEnd(
        v,
        started == null ? null : started.toInstant(),
        ended == null ? null : ended.toInstant(),
        rs.getString("trace_context"));
  }

  /** Completes many steps of one workflow in one transaction; answers in input order. */
  public List<CompletionResult> completeBatch(String name, List<StepCompletion> items) {
    List<Map<String, Object>> rows = new ArrayList<>(items.size());
    for (StepCompletion c : items) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("run_id", c.runId());
      row.put("msg_id", c.messageId());
      row.put("receipt", c.receipt());
      StepRecord step = c.step();
      if (step != null) {
        row.put("step_name", step.name());
        row.put("step_kind", step.kind());
        row.put("output", step.output());
        row.put("error", step.error());
        row.put("started_at", step.startedAt() == null ? null : step.startedAt().toString());
        if (step.state() != null) {
          row.put("state", step.state());
        }
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
          return new CompletionResult(
              CompletionOutcome.went(rs.getString("outcome"), msg, receipt), runEnd(rs));
        },
        name,
        Json.write(rows));
  }

  /**
   * Hands a task back, due after {@code delayMs}: a worker's retry, which counts as an attempt;
   * {@code step} (with its {@code error}, JSON text) names the step whose attempt failed.
   */
  public String retry(
      long runId, long messageId, long receipt, long delayMs, String step, String error) {
    return retry(runId, messageId, receipt, delayMs, true, step, error);
  }

  /**
   * Hands a task back; {@code counts} false for a task no worker saw (a task stream could not write
   * it), whose next delivery then reports the attempt this one did.
   */
  public String retry(long runId, long messageId, long receipt, long delayMs, boolean counts) {
    return retry(runId, messageId, receipt, delayMs, counts, null, null);
  }

  private String retry(
      long runId,
      long messageId,
      long receipt,
      long delayMs,
      boolean counts,
      String step,
      String error) {
    return sql.one(
            "SELECT queue.workflow_retry(?::bigint, ?::bigint, ?::bigint, ?::bigint, ?, ?, ?::jsonb)",
            rs -> rs.getString(1),
            runId,
            messageId,
            receipt,
            delayMs,
            counts,
            step,
            error)
        .orElseThrow();
  }

  /**
   * Journals finished {@code run} steps of a run under its lease in one statement ({@code
   * workflow_journal_steps}), in the order given; the lease carries on.
   */
  public JournalOutcome journalSteps(
      long runId, long messageId, long receipt, List<StepRecord> steps) {
    List<Map<String, Object>> rows = new ArrayList<>(steps.size());
    for (StepRecord step : steps) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("name", step.name());
      row.put("kind", step.kind());
      if (step.output() != null) {
        row.put("output", step.output());
      }
      if (step.error() != null && !step.error().isNull()) {
        row.put("error", step.error());
      }
      if (step.startedAt() != null) {
        row.put("startedAt", step.startedAt().toString());
      }
      if (step.state() != null) {
        row.put("state", step.state());
      }
      rows.add(row);
    }
    return sql.one(
            "SELECT outcome, journaled FROM queue.workflow_journal_steps(?::bigint, ?::bigint,"
                + " ?::bigint, ?::jsonb)",
            rs -> new JournalOutcome(rs.getString(1), rs.getInt(2)),
            runId,
            messageId,
            receipt,
            Json.write(rows))
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
