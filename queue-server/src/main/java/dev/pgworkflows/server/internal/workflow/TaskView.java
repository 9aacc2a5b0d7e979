package dev.pgworkflows.server.internal.workflow;

import com.fasterxml.jackson.annotation.JsonRawValue;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * One leased task for a worker: everything needed to replay the run without a second request.
 *
 * @param receipt the lease; every write about this task must present it
 * @param attempt how many times this message was handed out (1 on a first try)
 * @param reason why the run is due: start, resume, signal or timeout
 * @param traceContext the run's trace, {@code <trace id>-<run span id>-<parent span id>}
 */
public record TaskView(
    long runId,
    long messageId,
    String receipt,
    int attempt,
    int version,
    String reason,
    @JsonRawValue String input,
    @JsonRawValue String journal,
    Instant startedAt,
    String traceContext) {

  static TaskView of(ResultSet rs) throws SQLException {
    return new TaskView(
        rs.getLong("run_id"),
        rs.getLong("msg_id"),
        Long.toString(rs.getLong("receipt")),
        rs.getInt("attempt"),
        rs.getInt("version"),
        rs.getString("reason"),
        rs.getString("input") == null ? "null" : rs.getString("input"),
        rs.getString("journal"),
        rs.getTimestamp("started_at").toInstant(),
        rs.getString("trace_context"));
  }
}
