package dev.pgworkflows.workflows.internal.sql;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;

/**
 * A start on the caller's connection: the call {@code POST /v1/workflows/{name}/runs} makes ({@code
 * queue.workflow_start} with the same fields), checked the way that route checks them.
 */
public final class SqlStarts {
  /**
   * The retention ceiling the start function applies by default. The server's own ceiling ({@code
   * WORKFLOWS_MAX_RETENTION_DAYS}) is its configuration, which the database does not hold, so a
   * longer retention is refused rather than cut short.
   */
  static final int MAX_RETENTION_DAYS = 365;

  private static final String START =
      "SELECT run_id, status, created FROM queue.workflow_start(p_name => ?, p_input => ?::jsonb,"
          + " p_version => ?, p_idempotency_key => ?, p_retention_days => ?, p_timing => ?::jsonb)";

  private SqlStarts() {}

  public static Started start(Connection c, String workflow, Object input, StartOptions o) {
    if (o.version() != null && o.version() > 1_000_000) {
      throw new IllegalArgumentException(
          "version must be between 1 and 1000000, got " + o.version());
    }
    if (o.retentionDays() != null && o.retentionDays() > MAX_RETENTION_DAYS) {
      throw new IllegalArgumentException(
          "retentionDays: a start through SQL keeps a run at most "
              + MAX_RETENTION_DAYS
              + " days (the server's configured ceiling is not in the database), got "
              + o.retentionDays());
    }
    String json = json(input);
    String fields = fields(o);
    try {
      SchemaVersion.require(c);
      try (PreparedStatement ps = c.prepareStatement(START)) {
        ps.setString(1, workflow);
        ps.setString(2, json);
        setInt(ps, 3, o.version());
        ps.setString(4, o.idempotencyKey());
        setInt(ps, 5, o.retentionDays());
        ps.setString(6, fields);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          boolean created = rs.getBoolean(3);
          return new Started(
              workflow,
              rs.getLong(1),
              RunStatus.of(rs.getString(2)),
              created,
              o.debounceKey() != null && !created);
        }
      }
    } catch (SQLException e) {
      throw SqlErrors.translate("start of workflow " + workflow, e);
    }
  }

  /** The input as the client sends it: the SDK's mapper, JSON null for none. */
  static String json(Object value) {
    try {
      return Transport.JSON.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "could not serialize "
              + value.getClass().getName()
              + " as JSON: "
              + e.getOriginalMessage(),
          e);
    }
  }

  /**
   * The start's timing and flow fields as {@code workflow_start} takes them (the same object the
   * server builds from a start request), null when none is set.
   */
  private static String fields(StartOptions o) {
    ObjectNode f = Transport.JSON.createObjectNode();
    if (o.startAt() != null) {
      f.put("startAt", o.startAt().toString());
    }
    if (o.delay() != null) {
      f.put("delayMs", o.delay().toMillis());
    }
    if (o.deadlineAt() != null) {
      f.put("deadlineAt", o.deadlineAt().toString());
    }
    if (o.deadline() != null) {
      f.put("deadlineMs", o.deadline().toMillis());
    }
    if (o.debounceKey() != null) {
      f.put("debounceKey", o.debounceKey());
      f.put("debounceMs", o.debounceWindow().toMillis());
    }
    if (o.concurrencyKey() != null) {
      f.put("concurrencyKey", o.concurrencyKey());
    }
    if (o.priority() != null) {
      f.put("priority", o.priority());
    }
    return f.isEmpty() ? null : f.toString();
  }

  private static void setInt(PreparedStatement ps, int at, Integer v) throws SQLException {
    if (v == null) {
      ps.setNull(at, Types.INTEGER);
    } else {
      ps.setInt(at, v);
    }
  }
}
