package dev.pgworkflows.engine.internal.store;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.protocol.ConcurrencyLimit;
import dev.pgworkflows.protocol.KeyConcurrencyLimit;
import dev.pgworkflows.protocol.RateLimit;
import dev.pgworkflows.protocol.RateLimitedOutcome;
import dev.pgworkflows.protocol.ThrottleSettings;
import dev.pgworkflows.protocol.WorkerRouting;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Flow control's functions: concurrency limits, rate limits, and a step's rate-limited answer. */
public final class FlowStore {
  private static final TypeReference<TreeMap<String, String>> LABELS = new TypeReference<>() {};

  private final Sql sql;

  public FlowStore(Sql sql) {
    this.sql = sql;
  }

  /**
   * Sets (or, with a null limit, removes) a workflow's concurrency limit with its strategy,
   * limitFrom and total limit (null strategy: queue); answers the settings in force (empty when
   * removed).
   */
  public Optional<ConcurrencyLimit> setConcurrencyLimit(String workflow, ConcurrencyLimit req) {
    return sql.one(
        "SELECT * FROM queue.set_concurrency_limit(?, ?, ?, ?, ?::jsonb, ?, ?::jsonb)",
        rs -> rs.getObject("max_active") == null ? null : concurrency(rs),
        workflow,
        req.limit(),
        req.strategy() == null ? "queue" : req.strategy(),
        req.limitFrom(),
        req.limits() == null ? null : Json.write(req.limits()),
        req.totalLimit(),
        req.weights() == null ? null : Json.write(req.weights()));
  }

  /**
   * Sets (or, with a null limit, removes) a workflow's throttle; answers it as stored (empty when
   * removed).
   */
  public Optional<ThrottleSettings> setThrottle(String workflow, ThrottleSettings req) {
    return sql.one(
        "SELECT * FROM queue.set_throttle(?, ?, ?, ?, ?)",
        rs -> rs.getObject("max_starts") == null ? null : throttle(rs),
        workflow,
        req.limit(),
        req.periodMs(),
        req.burst() == null ? 1 : req.burst(),
        Boolean.TRUE.equals(req.perKey()));
  }

  /**
   * Sets which workers take a workflow's tasks (no selector and not sticky removes the routing);
   * answers it as stored (empty when removed).
   */
  public Optional<WorkerRouting> setWorkerRouting(String workflow, WorkerRouting req) {
    return sql.one(
        "SELECT * FROM queue.set_worker_routing(?, ?::jsonb, ?::jsonb, ?)",
        rs -> rs.getString("workflow_name") == null ? null : routing(rs),
        workflow,
        req.require() == null ? null : Json.write(new TreeMap<>(req.require())),
        req.prefer() == null ? null : Json.write(new TreeMap<>(req.prefer())),
        Boolean.TRUE.equals(req.sticky()));
  }

  /** Which workers take a workflow's tasks, empty when any worker does. */
  public Optional<WorkerRouting> workerRouting(String workflow) {
    return sql.one("SELECT * FROM queue.worker_routing_of(?)", FlowStore::routing, workflow);
  }

  private static WorkerRouting routing(ResultSet rs) throws SQLException {
    String require = rs.getString("require");
    String prefer = rs.getString("prefer");
    return new WorkerRouting(
        rs.getString("workflow_name"),
        require == null ? null : Json.read(require, LABELS),
        prefer == null ? null : Json.read(prefer, LABELS),
        rs.getBoolean("sticky"));
  }

  /** The workflows whose runs stick to their worker. */
  public List<String> stickyWorkflows() {
    return sql.list("SELECT queue.sticky_workflows()", rs -> rs.getString(1));
  }

  /**
   * Hands a held task to the workers whose labels hold {@code labels} ({@code workflow_route});
   * answers routed, run_here, stale or not_running.
   */
  public String route(
      long runId, long msgId, long receipt, Map<String, String> labels, boolean soft) {
    return sql.one(
            "SELECT queue.workflow_route(?, ?, ?, ?::jsonb, ?)",
            rs -> rs.getString(1),
            runId,
            msgId,
            receipt,
            Json.write(new TreeMap<>(labels)),
            soft)
        .orElseThrow();
  }

  /** A workflow's throttle, empty when it has none. */
  public Optional<ThrottleSettings> throttle(String workflow) {
    return sql.one("SELECT * FROM queue.throttle_of(?)", FlowStore::throttle, workflow);
  }

  private static ThrottleSettings throttle(ResultSet rs) throws SQLException {
    return new ThrottleSettings(
        rs.getString("workflow_name"),
        rs.getInt("max_starts"),
        rs.getLong("period_ms"),
        rs.getInt("burst"),
        rs.getBoolean("per_key"));
  }

  /** A workflow's concurrency limit with its strategy and limitFrom, empty when it has none. */
  public Optional<ConcurrencyLimit> concurrencySettings(String workflow) {
    return sql.one(
        "SELECT * FROM queue.concurrency_settings_of(?)", FlowStore::concurrency, workflow);
  }

  private static ConcurrencyLimit concurrency(ResultSet rs) throws SQLException {
    String limits = rs.getString("limits");
    String weights = rs.getString("weights");
    return new ConcurrencyLimit(
        rs.getString("workflow_name"),
        rs.getInt("max_active"),
        rs.getString("strategy"),
        rs.getString("limit_from"),
        limits == null ? null : Json.read(limits, LIMITS),
        (Integer) rs.getObject("total_limit"),
        weights == null ? null : Json.read(weights, LIMITS),
        null);
  }

  /** A JSON object of whole numbers by name (limits by value, weights by key). */
  private static final TypeReference<Map<String, Integer>> LIMITS = new TypeReference<>() {};

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
