package dev.pgworkflows.engine.internal.store;

import java.time.Instant;
import java.util.List;

/** The audit trail's functions ({@code sql/functions/audit.sql}): record, tokens, list. */
public final class AuditStore {
  /** One entry of the trail; {@code details} is a JSON object's text. */
  public record Entry(
      long id,
      Instant at,
      String actor,
      String action,
      String target,
      String details,
      String requestId) {}

  private final Sql sql;

  public AuditStore(Sql sql) {
    this.sql = sql;
  }

  /** Records an action; returns its id. */
  public long record(
      String actor, String action, String target, String detailsJson, String requestId) {
    return sql.one(
            "SELECT queue.audit_record(?, ?, ?, ?::jsonb, ?)",
            rs -> rs.getLong(1),
            actor,
            action,
            target,
            detailsJson,
            requestId)
        .orElseThrow();
  }

  /** Records the token configuration when it differs from the last recorded; whether it did. */
  public boolean tokens(String detailsJson) {
    return sql.one("SELECT queue.audit_tokens(?::jsonb)", rs -> rs.getBoolean(1), detailsJson)
        .orElseThrow();
  }

  /** Entries newest first, before {@code before} (null: from the newest), of one action or all. */
  public List<Entry> list(Long before, int limit, String action) {
    return sql.list(
        "SELECT audit_id, at, actor, action, target, details::text, request_id"
            + " FROM queue.audit_list(?, ?, ?)",
        rs ->
            new Entry(
                rs.getLong(1),
                rs.getTimestamp(2).toInstant(),
                rs.getString(3),
                rs.getString(4),
                rs.getString(5),
                rs.getString(6),
                rs.getString(7)),
        before,
        limit,
        action);
  }
}
