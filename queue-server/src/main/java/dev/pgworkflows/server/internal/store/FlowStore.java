package dev.pgworkflows.server.internal.store;

import dev.pgworkflows.protocol.RateLimit;
import dev.pgworkflows.protocol.RateLimitedOutcome;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
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

  /** A workflow's concurrency limit, empty when it has none. */
  public Optional<Integer> concurrencyLimit(String workflow) {
    return sql.one(
            "SELECT queue.concurrency_limit_of(?)", rs -> (Integer) rs.getObject(1), workflow)
        .filter(l -> l != null);
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
