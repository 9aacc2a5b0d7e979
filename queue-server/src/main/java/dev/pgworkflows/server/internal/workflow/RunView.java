package dev.pgworkflows.server.internal.workflow;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;

/** A workflow run as the API shows it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunView(
    long runId,
    String workflow,
    int version,
    String status,
    @JsonRawValue String input,
    @JsonRawValue String output,
    @JsonRawValue String error,
    String idempotencyKey,
    int retentionDays,
    Waiting waitingFor,
    Instant startedAt,
    Instant completedAt,
    @JsonIgnore String traceContext) {

  /** The event a suspended run waits for. */
  public record Waiting(String step, String event, @JsonRawValue String match) {}

  static RunView of(ResultSet rs) throws SQLException {
    String waitEvent = rs.getString("wait_event");
    Timestamp completed = rs.getTimestamp("completed_at");
    return new RunView(
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
            : new Waiting(rs.getString("wait_step"), waitEvent, rs.getString("wait_match")),
        rs.getTimestamp("started_at").toInstant(),
        completed == null ? null : completed.toInstant(),
        rs.getString("trace_context"));
  }
}
