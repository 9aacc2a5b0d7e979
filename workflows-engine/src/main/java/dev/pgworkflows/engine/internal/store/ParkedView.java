package dev.pgworkflows.engine.internal.store;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * A message an operator took out of its group, kept until redriven: {@code id} is the parked
 * message's own id, {@code messageId} the one it had in its queue.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ParkedView(
    long id,
    long messageId,
    String groupId,
    int readCount,
    Instant enqueuedAt,
    Instant parkedAt,
    @JsonRawValue String body,
    @JsonRawValue String headers) {

  static ParkedView of(ResultSet rs) throws SQLException {
    return new ParkedView(
        rs.getLong("parked_id"),
        rs.getLong("msg_id"),
        rs.getString("group_id"),
        rs.getInt("read_ct"),
        rs.getTimestamp("enqueued_at").toInstant(),
        rs.getTimestamp("parked_at").toInstant(),
        rs.getString("body"),
        rs.getString("headers"));
  }
}
