package dev.pgworkflows.engine.internal.store;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;

/** Callback URLs' tokens: minted for a run's step, completed once by whoever holds one. */
public final class CallbackStore {
  /** A callback as minted: its token, when it stops working, and whether this call made it. */
  public record Minted(String token, Instant expiresAt, boolean created) {}

  /**
   * What a token did: {@code resolved} or {@code rejected}, {@code gone} (used, late, or its run
   * ended) or {@code invalid} (not a token of this database); the run it names, when it is one.
   */
  public record Resolved(String outcome, Long runId, String workflow) {}

  /** A run's callback, without its token. */
  public record Callback(
      String name, Instant createdAt, Instant expiresAt, Instant resolvedAt, String outcome) {}

  private final Sql sql;

  public CallbackStore(Sql sql) {
    this.sql = sql;
  }

  /**
   * Mints callback {@code name} of a running run, good for {@code timeoutMs}; a repeat answers it.
   */
  public Minted create(long runId, String name, long timeoutMs) {
    return sql.one(
            "SELECT token, expires_at, created FROM queue.workflow_callback_create(?::bigint, ?,"
                + " ?::bigint)",
            rs -> new Minted(rs.getString(1), rs.getTimestamp(2).toInstant(), rs.getBoolean(3)),
            runId,
            name,
            timeoutMs)
        .orElseThrow();
  }

  /** Completes the callback {@code token} names, once ({@code ok} false: rejects it). */
  public Resolved resolve(String token, boolean ok, String body) {
    return sql.one(
            "SELECT outcome, run_id, workflow_name FROM queue.workflow_callback_resolve(?, ?,"
                + " ?::jsonb)",
            rs -> {
              long run = rs.getLong(2);
              return new Resolved(rs.getString(1), rs.wasNull() ? null : run, rs.getString(3));
            },
            token,
            ok,
            body)
        .orElseThrow();
  }

  /** Makes a new key the one new callbacks are minted under; answers its id. */
  public int rotateKey() {
    return sql.one("SELECT queue.callback_rotate_key()", rs -> rs.getInt(1)).orElseThrow();
  }

  /** A run's callbacks, oldest first. */
  public List<Callback> list(long runId) {
    return sql.list(
        "SELECT name, created_at, expires_at, resolved_at, outcome FROM"
            + " queue.workflow_callbacks(?::bigint)",
        rs ->
            new Callback(
                rs.getString(1),
                rs.getTimestamp(2).toInstant(),
                rs.getTimestamp(3).toInstant(),
                instant(rs.getTimestamp(4)),
                rs.getString(5)),
        runId);
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
