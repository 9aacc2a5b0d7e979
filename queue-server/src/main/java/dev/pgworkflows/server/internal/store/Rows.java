package dev.pgworkflows.server.internal.store;

import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.Task;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;

/** The protocol's records made from the rows of the workflow functions. */
final class Rows {
  private Rows() {}

  /** A row of {@code workflow_poll}: a leased task. */
  static Task task(ResultSet rs) throws SQLException {
    return new Task(
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

  /** A row of {@code workflow_run}, with the trace context the API does not show. */
  static StoredRun run(ResultSet rs) throws SQLException {
    String waitEvent = rs.getString("wait_event");
    Timestamp completed = rs.getTimestamp("completed_at");
    Run run =
        new Run(
            rs.getLong("run_id"),
            rs.getString("workflow_name"),
            rs.getInt("workflow_version"),
            rs.getString("status"),
            rs.getString("input"),
            rs.getString("output"),
            rs.getString("error"),
            rs.getString("idempotency_key"),
            rs.getInt("retention_days"),
            waitEvent == null
                ? null
                : new Run.Waiting(rs.getString("wait_step"), waitEvent, rs.getString("wait_match")),
            rs.getTimestamp("started_at").toInstant(),
            completed == null ? null : completed.toInstant());
    return new StoredRun(run, rs.getString("trace_context"));
  }
}
