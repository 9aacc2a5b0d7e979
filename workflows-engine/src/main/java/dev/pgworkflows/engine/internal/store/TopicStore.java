package dev.pgworkflows.engine.internal.store;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.pgworkflows.protocol.EventBatch;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Subscriptions and publishing, through the functions of sql/functions/topics.sql. */
public final class TopicStore {
  /** A subscription as the API shows it; the secret is never returned. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Subscription(
      long id,
      String pattern,
      String type,
      String name,
      String url,
      boolean signed,
      Instant createdAt,
      EventBatch batch) {}

  /** Where one publish went. */
  public record Fanout(long subscriptionId, String type, String target, long id) {}

  /** A run a workflow's cancel-on rule cancelled for a published message. */
  public record CancelledRun(String workflow, long runId) {}

  /** Where a published message went, and the runs it cancelled. */
  public record Published(List<Fanout> deliveries, List<CancelledRun> cancelled) {}

  private final Sql sql;

  public TopicStore(Sql sql) {
    this.sql = sql;
  }

  /** Returns the subscription id and whether it was created now. */
  public record Subscribed(long id, boolean created) {}

  /** Subscribes; {@code batch} (null: none) makes a workflow subscription batch. */
  public Subscribed subscribe(
      String pattern, String type, String target, String secret, EventBatch batch) {
    return sql.one(
            "SELECT * FROM queue.subscribe(?, ?, ?, ?, ?, ?::bigint, ?)",
            rs -> new Subscribed(rs.getLong(1), rs.getBoolean(2)),
            pattern,
            type,
            target,
            secret,
            batch == null ? null : batch.maxSize(),
            batch == null ? null : batch.timeoutMs(),
            batch == null ? null : batch.key())
        .orElseThrow();
  }

  /** A batch whose run a timer started: its subscription, workflow, key, run and size. */
  public record BatchStarted(
      long subscriptionId, String workflow, String key, long runId, int size) {}

  /**
   * Starts the runs of up to {@code limit} batches whose time has come ({@code batch_flush_due}).
   */
  public List<BatchStarted> flushDueBatches(int limit) {
    return sql.list(
        "SELECT * FROM queue.batch_flush_due(?)",
        rs ->
            new BatchStarted(
                rs.getLong("subscription_id"),
                rs.getString("workflow_name"),
                rs.getString("batch_key"),
                rs.getLong("run_id"),
                rs.getInt("size")),
        limit);
  }

  public List<Subscription> list(String pattern) {
    return sql.list(
        "SELECT subscription_id, pattern, target_type, target, secret IS NOT NULL, created_at,"
            + " batch_max, batch_timeout_ms, batch_key"
            + " FROM queue.subscription WHERE (?::text IS NULL OR pattern = ?::text)"
            + " ORDER BY subscription_id",
        rs -> {
          String type = rs.getString(3);
          boolean isQueue = !type.startsWith("http");
          return new Subscription(
              rs.getLong(1),
              rs.getString(2),
              type,
              isQueue ? rs.getString(4) : null,
              isQueue ? null : rs.getString(4),
              rs.getBoolean(5),
              rs.getTimestamp(6).toInstant(),
              rs.getObject(7) == null
                  ? null
                  : new EventBatch(rs.getInt(7), rs.getLong(8), rs.getString(9)));
        },
        pattern,
        pattern);
  }

  public boolean unsubscribe(long id) {
    return sql.one("SELECT queue.unsubscribe(?::bigint)", rs -> rs.getBoolean(1), id).orElseThrow();
  }

  public Published publish(String topic, String body, String headers) {
    List<Fanout> deliveries = new ArrayList<>();
    List<CancelledRun> cancelled = new ArrayList<>();
    sql.list(
        "SELECT * FROM queue.publish(?, ?::jsonb, ?::jsonb)",
        rs -> {
          if ("cancel".equals(rs.getString(2))) {
            return cancelled.add(new CancelledRun(rs.getString(3), rs.getLong(4)));
          }
          return deliveries.add(
              new Fanout(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getLong(4)));
        },
        topic,
        body,
        headers);
    return new Published(deliveries, cancelled);
  }
}
