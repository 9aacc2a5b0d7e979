package dev.pgworkflows.engine.internal.store;

import java.sql.Array;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** The queue's SQL functions, called with parameters; no queue SQL is assembled here. */
public final class QueueStore {
  private static final String QUEUE_WITH_METRICS =
      "SELECT q.queue_name, q.fifo, q.visibility_timeout, q.max_receives, q.created_at,"
          + " m.depth, m.visible, m.in_flight, m.delayed, m.oldest_age_seconds, m.dead_lettered"
          + " FROM queue.queue_meta q, LATERAL queue.queue_metrics(q.queue_name) m";

  private final Sql sql;

  public QueueStore(Sql sql) {
    this.sql = sql;
  }

  public boolean create(String name, boolean fifo, int visibilityTimeout, Integer maxReceives) {
    return sql.one(
            "SELECT queue.create_queue(?, ?, ?, ?)",
            rs -> rs.getBoolean(1),
            name,
            fifo,
            visibilityTimeout,
            maxReceives)
        .orElseThrow();
  }

  public List<QueueView> list() {
    return sql.list(QUEUE_WITH_METRICS + " ORDER BY q.queue_name", QueueView::of);
  }

  public Optional<QueueView> get(String name) {
    return sql.one(QUEUE_WITH_METRICS + " WHERE q.queue_name = ?", QueueView::of, name);
  }

  public boolean drop(String name) {
    return sql.one("SELECT queue.drop_queue(?)", rs -> rs.getBoolean(1), name).orElseThrow();
  }

  public long purge(String name) {
    return sql.one("SELECT queue.purge_queue(?)", rs -> rs.getLong(1), name).orElseThrow();
  }

  /** The message id; for a workflow's queue {@code __wf_<name>}, the id of the run it started. */
  public long send(String name, String body, String headers, int delay, String groupId) {
    return sql.one(
            "SELECT queue.send(?, ?::jsonb, ?::jsonb, ?, ?)",
            rs -> rs.getLong(1),
            name,
            body,
            headers,
            delay,
            groupId)
        .orElseThrow();
  }

  /**
   * {@code messages} is a JSON array of {body, headers?, delaySeconds?, groupId?}; ids as {@link
   * #send} answers them.
   */
  public List<Long> sendBatch(String name, String messages) {
    return sql.list(
        "SELECT msg_id FROM queue.send_batch(?, ?::jsonb)", rs -> rs.getLong(1), name, messages);
  }

  public List<MessageView> receive(String name, int max, Integer vt, String matcher) {
    return sql.list(
        "SELECT * FROM queue.receive(?, ?, ?, ?::jsonb)", MessageView::of, name, max, vt, matcher);
  }

  public boolean delete(String name, long id) {
    return sql.one("SELECT queue.delete(?, ?::bigint)", rs -> rs.getBoolean(1), name, id)
        .orElseThrow();
  }

  /** One result per id, in order. */
  public record Deleted(long id, boolean deleted) {}

  public List<Deleted> deleteMany(String name, List<Long> ids) {
    return sql.onConnection(
        c -> {
          Array arr = c.createArrayOf("bigint", ids.toArray());
          return Sql.list(
              c,
              "SELECT * FROM queue.delete(?, ?::bigint[])",
              rs -> new Deleted(rs.getLong(1), rs.getBoolean(2)),
              name,
              arr);
        });
  }

  public Optional<Instant> changeVisibility(String name, long id, int seconds) {
    return sql.one(
        "SELECT queue.change_visibility(?, ?::bigint, ?)",
        rs -> toInstant(rs.getTimestamp(1)),
        name,
        id,
        seconds);
  }

  public Optional<Instant> nextVisibleAt(String name) {
    return sql.one("SELECT queue.next_visible_at(?)", rs -> toInstant(rs.getTimestamp(1)), name);
  }

  public List<DeadLetterView> deadLetters(String name, int limit, long after) {
    return sql.list(
        "SELECT * FROM queue.list_dead_letters(?, ?, ?::bigint)",
        DeadLetterView::of,
        name,
        limit,
        after);
  }

  public long redrive(String name, List<Long> deadIds) {
    return sql.onConnection(
        c -> {
          Array arr = deadIds == null ? null : c.createArrayOf("bigint", deadIds.toArray());
          return Sql.list(
                  c,
                  "SELECT queue.redrive_dead_letters(?, ?::bigint[])",
                  rs -> rs.getLong(1),
                  name,
                  arr)
              .get(0);
        });
  }

  private static Instant toInstant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
