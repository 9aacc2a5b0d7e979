package dev.pgworkflows.engine.internal.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/** A queue's settings and its current numbers. */
public record QueueView(
    String name,
    boolean fifo,
    int visibilityTimeoutSeconds,
    Integer maxReceives,
    Instant createdAt,
    Metrics metrics) {

  /** Counts at the moment of the request. */
  public record Metrics(
      long depth,
      long visible,
      long inFlight,
      long delayed,
      double oldestAgeSeconds,
      long deadLettered) {}

  static QueueView of(ResultSet rs) throws SQLException {
    return new QueueView(
        rs.getString("queue_name"),
        rs.getBoolean("fifo"),
        rs.getInt("visibility_timeout"),
        (Integer) rs.getObject("max_receives"),
        rs.getTimestamp("created_at").toInstant(),
        new Metrics(
            rs.getLong("depth"),
            rs.getLong("visible"),
            rs.getLong("in_flight"),
            rs.getLong("delayed"),
            rs.getDouble("oldest_age_seconds"),
            rs.getLong("dead_lettered")));
  }
}
