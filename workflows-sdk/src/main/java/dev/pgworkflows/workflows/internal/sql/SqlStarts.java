package dev.pgworkflows.workflows.internal.sql;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.workflows.Admission;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.internal.http.Transport;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanId;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A start on the caller's connection: the call {@code POST /v1/workflows/{name}/runs} makes ({@code
 * queue.workflow_start} with the same fields), checked the way that route checks them.
 */
public final class SqlStarts {
  /**
   * No ceiling is sent: the function then applies the one the servers stored at startup ({@code
   * WORKFLOWS_MAX_RETENTION_DAYS}), capping a longer retention as the server's routes do.
   */
  private static final String START =
      "SELECT run_id, status, created, admission, cancelled_runs FROM queue.workflow_start(p_name"
          + " => ?, p_input => ?::jsonb,"
          + " p_version => ?, p_idempotency_key => ?, p_retention_days => ?,"
          + " p_trace_context => ?, p_timing => ?::jsonb)";

  private SqlStarts() {}

  public static Started start(Connection c, String workflow, Object input, StartOptions o) {
    if (o.version() != null && o.version() > 1_000_000) {
      throw new IllegalArgumentException(
          "version must be between 1 and 1000000, got " + o.version());
    }
    String json = json(input);
    String fields = fields(o);
    String trace = traceContext();
    try {
      return CallerTransaction.call(
          c,
          () -> {
            SchemaVersion.require(c);
            if (o.debounceKey() != null) {
              CallerTransaction.requireReadCommitted(c);
            }
            try (PreparedStatement ps = c.prepareStatement(START)) {
              ps.setString(1, workflow);
              ps.setString(2, json);
              setInt(ps, 3, o.version());
              ps.setString(4, o.idempotencyKey());
              setInt(ps, 5, o.retentionDays());
              ps.setString(6, trace);
              ps.setString(7, fields);
              try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                  throw new SQLException("queue.workflow_start answered no row");
                }
                boolean created = rs.getBoolean(3);
                String admission = rs.getString(4);
                Array cancelled = rs.getArray(5);
                return new Started(
                    workflow,
                    rs.getLong(1),
                    RunStatus.of(rs.getString(2)),
                    created,
                    o.debounceKey() != null && !created,
                    admission == null
                        ? null
                        : Admission.valueOf(admission.toUpperCase(Locale.ROOT)),
                    cancelled == null ? List.of() : List.of((Long[]) cancelled.getArray()));
              }
            }
          });
    } catch (SQLException e) {
      throw SqlErrors.translate("start of workflow " + workflow, e);
    }
  }

  /**
   * The run's trace identity when the caller is inside a valid span, as the server's start route
   * records it ({@code <trace id>-<run span id>-<parent span id>}): the run span, which the server
   * emits when the run ends, is then a child of the caller's span, in its trace.
   */
  static String traceContext() {
    SpanContext caller = Span.current().getSpanContext();
    if (!caller.isValid()) {
      return null;
    }
    long id;
    do {
      id = ThreadLocalRandom.current().nextLong();
    } while (id == 0);
    return caller.getTraceId() + "-" + SpanId.fromLong(id) + "-" + caller.getSpanId();
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
