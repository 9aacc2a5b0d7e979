package dev.pgworkflows.engine.internal.store;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/** A message that was received too many times, kept for inspection and re-drive. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record DeadLetterView(
    long deadId,
    long messageId,
    String groupId,
    int readCount,
    Instant enqueuedAt,
    Instant deadAt,
    @JsonRawValue String body,
    @JsonRawValue String headers) {

  static DeadLetterView of(ResultSet rs) throws SQLException {
    return new DeadLetterView(
        rs.getLong("dead_id"),
        rs.getLong("msg_id"),
        rs.getString("group_id"),
        rs.getInt("read_ct"),
        rs.getTimestamp("enqueued_at").toInstant(),
        rs.getTimestamp("dead_at").toInstant(),
        rs.getString("body"),
        rs.getString("headers"));
  }
}
