package dev.pgworkflows.engine.internal.store;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import dev.pgworkflows.protocol.UpdateResult;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Updates: sent to a run, taken and answered by the worker of an update task, read as they stand.
 */
public final class UpdateStore {
  /** A run's update as its list shows it. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Listed(
      long updateId,
      String update,
      @JsonRawValue String input,
      String idempotencyKey,
      String status,
      @JsonRawValue String output,
      @JsonRawValue String error,
      Instant sentAt,
      Instant answeredAt) {}

  private final Sql sql;

  public UpdateStore(Sql sql) {
    this.sql = sql;
  }

  /** Sends update {@code name} with {@code input} (JSON text) to a running run. */
  public UpdateResult send(long runId, String name, String input, String key) {
    return sql.one(
            "SELECT update_id, status, output::text, error::text, created FROM"
                + " queue.workflow_update_send(?::bigint, ?, ?::jsonb, ?)",
            rs ->
                new UpdateResult(
                    rs.getLong(1),
                    runId,
                    name,
                    rs.getString(2),
                    rs.getString(3),
                    rs.getString(4),
                    rs.getBoolean(5)),
            runId,
            name,
            input,
            key)
        .orElseThrow();
  }

  /** The updates {@code ids} as they stand; an id that is not one is left out. */
  public List<UpdateResult> results(Collection<Long> ids) {
    return sql.onConnection(
        c -> {
          try (var ps =
              c.prepareStatement(
                  "SELECT update_id, run_id, name, status, output::text, error::text FROM"
                      + " queue.workflow_update_results(?)")) {
            ps.setArray(1, c.createArrayOf("bigint", ids.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
              List<UpdateResult> all = new java.util.ArrayList<>();
              while (rs.next()) {
                all.add(result(rs));
              }
              return all;
            }
          }
        });
  }

  /** Update {@code id}, when there is one. */
  public Optional<UpdateResult> result(long id) {
    return results(List.of(id)).stream().findFirst();
  }

  private static UpdateResult result(ResultSet rs) throws SQLException {
    return new UpdateResult(
        rs.getLong(1),
        rs.getLong(2),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        rs.getString(6),
        null);
  }

  /** The pending updates and state of the update task the receipt holds; null when it does not. */
  public String take(long runId, long messageId, long receipt) {
    return sql.one(
            "SELECT queue.workflow_update_take(?::bigint, ?::bigint, ?::bigint)::text",
            rs -> rs.getString(1),
            runId,
            messageId,
            receipt)
        .orElse(null);
  }

  /** Answers the updates of the update task the receipt holds (answers: JSON text of an array). */
  public String answer(long runId, long messageId, long receipt, String answers) {
    return sql.one(
            "SELECT queue.workflow_update_answer(?::bigint, ?::bigint, ?::bigint, ?::jsonb)",
            rs -> rs.getString(1),
            runId,
            messageId,
            receipt,
            answers)
        .orElseThrow();
  }

  /** A run's updates, oldest first. */
  public List<Listed> list(long runId) {
    return sql.list(
        "SELECT update_id, name, input::text, idempotency_key, status, output::text, error::text,"
            + " sent_at, answered_at FROM queue.workflow_updates(?::bigint)",
        rs ->
            new Listed(
                rs.getLong(1),
                rs.getString(2),
                rs.getString(3),
                rs.getString(4),
                rs.getString(5),
                rs.getString(6),
                rs.getString(7),
                rs.getTimestamp(8).toInstant(),
                instant(rs.getTimestamp(9))),
        runId);
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
