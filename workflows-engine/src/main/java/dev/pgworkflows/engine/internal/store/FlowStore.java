package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.protocol.KeyConcurrencyLimit;
import dev.pgworkflows.protocol.RateLimit;
import dev.pgworkflows.protocol.RateLimitedOutcome;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.List;
import java.util.Optional;

/** Flow control's functions: concurrency limits, rate limits, and a step's rate-limited answer. */
public final class FlowStore {
  private final Sql sql;

  public FlowStore(Sql sql) {
    this.sql = sql;
  }

  /** Sets (or, with null, removes) a workflow's concurrency limit; answers the limit in force. */
  public Integer setConcurrencyLimit(String workflow, Integer limit) {
    return sql.one(
            "SELECT queue.set_concurrency_limit(?, ?)",
            rs -> (Integer) rs.getObject(1),
            workflow,
            limit)
        .orElse(null);
  }

  /**
   * Replaces a workflow's cancel-on rules ({@code rules}, a JSON array as {@code
   * queue.workflow_set_cancel_on} takes it); answers them as stored, a JSON array.
   */
  public String setCancelOn(String workflow, String rules) {
    return sql.one(
            "SELECT queue.workflow_set_cancel_on(?, ?::jsonb), queue.workflow_cancel_on_rules(?)",
            rs -> rs.getString(2),
            workflow,
            rules,
            workflow)
        .orElseThrow();
  }

  /** A workflow's cancel-on rules, a JSON array ([] when it has none). */
  public String cancelOn(String workflow) {
    return sql.one("SELECT queue.workflow_cancel_on_rules(?)", rs -> rs.getString(1), workflow)
        .orElseThrow();
  }

  /** A workflow's concurrency limit, empty when it has none. */
  public Optional<Integer> concurrencyLimit(String workflow) {
    return sql.one(
            "SELECT queue.concurrency_limit_of(?)", rs -> (Integer) rs.getObject(1), workflow)
        .filter(l -> l != null);
  }

  /**
   * Sets (or, with null, removes) the concurrency limit of one key of a workflow, in place of the
   * workflow's; answers the key's own limit now (null when removed).
   */
  public Integer setKeyConcurrencyLimit(String workflow, String key, Integer limit) {
    return sql.one(
            "SELECT queue.set_key_concurrency_limit(?, ?, ?)",
            rs -> (Integer) rs.getObject(1),
            workflow,
            key,
            limit)
        .orElse(null);
  }

  /** One key's own concurrency limit, empty when it has none. */
  public Optional<Integer> keyConcurrencyLimit(String workflow, String key) {
    return sql.one(
            "SELECT queue.key_concurrency_limit_of(?, ?)",
            rs -> (Integer) rs.getObject(1),
            workflow,
            key)
        .filter(l -> l != null);
  }

  /** A workflow's keys with a concurrency limit of their own, by key. */
  public List<KeyConcurrencyLimit> keyConcurrencyLimits(String workflow) {
    return sql.list(
        "SELECT * FROM queue.key_concurrency_limits(?)",
        rs -> new KeyConcurrencyLimit(workflow, rs.getString(1), rs.getInt(2)),
        workflow);
  }

  /** Sets (or, with nulls, removes) a key's token bucket; answers the key's state. */
  public RateLimit setRateLimit(String key, Integer limit, Long periodMs) {
    return sql.one(
            "SELECT * FROM queue.set_rate_limit(?, ?, ?)",
            FlowStore::rateLimit,
            key,
            limit,
            periodMs)
        .orElseThrow();
  }

  /** A key's bucket and suspension, empty when it has neither. */
  public Optional<RateLimit> rateLimit(String key) {
    return sql.one("SELECT * FROM queue.rate_limit_of(?)", FlowStore::rateLimit, key);
  }

  /** Holds the run's key back for {@code retryAfterMs} and hands its task back for then. */
  public RateLimitedOutcome rateLimited(
      long runId, long messageId, long receipt, long retryAfterMs) {
    return sql.one(
            "SELECT * FROM queue.workflow_rate_limited(?::bigint, ?::bigint, ?::bigint, ?::bigint)",
            rs -> {
              Timestamp at = rs.getTimestamp("resume_at");
              return new RateLimitedOutcome(
                  rs.getString("outcome"), at == null ? null : at.toInstant());
            },
            runId,
            messageId,
            receipt,
            retryAfterMs)
        .orElseThrow();
  }

  private static RateLimit rateLimit(ResultSet rs) throws SQLException {
    Timestamp until = rs.getTimestamp("suspended_until");
    Timestamp now = new Timestamp(System.currentTimeMillis());
    return new RateLimit(
        rs.getString("concurrency_key"),
        (Integer) rs.getObject("max_tokens"),
        (Long) rs.getObject("period_ms"),
        until == null || !until.after(now) ? null : until.toInstant());
  }
}
