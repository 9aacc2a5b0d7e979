package dev.pgworkflows.engine.internal.store;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.BulkOperation;
import dev.pgworkflows.protocol.BulkRuns;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Bulk operations' rows (sql/functions/bulk_operations.sql). */
public final class BulkStore {
  private final Sql sql;

  public BulkStore(Sql sql) {
    this.sql = sql;
  }

  /** A job that is running: its id and rate. */
  public record Running(long batchId, int rate) {}

  /** What one step did: how many runs it acted on, and the job's status after it. */
  public record Stepped(int acted, String status) {}

  public BulkOperation create(
      String action,
      String query,
      JsonNode tree,
      String params,
      int rate,
      boolean confirm,
      String actor) {
    return sql.one(
            "SELECT * FROM queue.bulk_create(?, ?, ?::jsonb, ?::jsonb, ?, ?, ?)",
            BulkStore::operation,
            action,
            query,
            tree == null ? null : tree.toString(),
            params,
            rate,
            confirm,
            actor)
        .orElseThrow();
  }

  public Optional<BulkOperation> get(long batchId) {
    return sql.one(
        "SELECT * FROM queue.bulk_operation WHERE batch_id = ?", BulkStore::operation, batchId);
  }

  public List<BulkOperation> list(Long before, int limit) {
    return sql.list(
        "SELECT * FROM queue.bulk_list(?::bigint, ?)", BulkStore::operation, before, limit);
  }

  /** Cancels a running job; the job as it then is, empty when there is none. */
  public Optional<BulkOperation> cancel(long batchId) {
    return sql.one("SELECT * FROM queue.bulk_cancel(?::bigint)", BulkStore::operation, batchId);
  }

  public List<BulkRuns.Outcome> runs(long batchId, String outcome, Long before, int limit) {
    return sql.list(
        "SELECT run_id, outcome, detail, at FROM queue.bulk_runs(?::bigint, ?, ?::bigint, ?)",
        rs ->
            new BulkRuns.Outcome(
                rs.getLong(1), rs.getString(2), rs.getString(3), rs.getTimestamp(4).toInstant()),
        batchId,
        outcome,
        before,
        limit);
  }

  public List<Running> running() {
    return sql.list(
        "SELECT batch_id, rate FROM queue.bulk_running()",
        rs -> new Running(rs.getLong(1), rs.getInt(2)));
  }

  /** Acts on the job's next page of up to {@code limit} runs, in one transaction. */
  public Stepped step(long batchId, int limit) {
    return sql.one(
            "SELECT acted, status FROM queue.bulk_step(?::bigint, ?)",
            rs -> new Stepped(rs.getInt(1), rs.getString(2)),
            batchId,
            limit)
        .orElseThrow();
  }

  private static BulkOperation operation(ResultSet rs) throws SQLException {
    return new BulkOperation(
        rs.getLong("batch_id"),
        rs.getString("action"),
        rs.getString("query"),
        rs.getString("params"),
        rs.getString("status"),
        rs.getLong("selected"),
        rs.getLong("done"),
        rs.getLong("skipped"),
        rs.getLong("failed"),
        rs.getInt("rate"),
        rs.getString("created_by"),
        instant(rs.getTimestamp("created_at")),
        instant(rs.getTimestamp("updated_at")),
        instant(rs.getTimestamp("finished_at")));
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
