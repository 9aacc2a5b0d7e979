package dev.pgworkflows.engine.internal.store;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/** A received message as the API returns it; body and headers pass through as raw JSON. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record MessageView(
    long id,
    int readCount,
    Instant enqueuedAt,
    Instant visibleAt,
    @JsonRawValue String body,
    @JsonRawValue String headers,
    String groupId) {

  /** Maps a row of {@code queue.message}. */
  public static MessageView of(ResultSet rs) throws SQLException {
    return new MessageView(
        rs.getLong("msg_id"),
        rs.getInt("read_ct"),
        rs.getTimestamp("enqueued_at").toInstant(),
        rs.getTimestamp("vt").toInstant(),
        rs.getString("body"),
        rs.getString("headers"),
        rs.getString("group_id"));
  }
}
