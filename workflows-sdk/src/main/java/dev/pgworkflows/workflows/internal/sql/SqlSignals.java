package dev.pgworkflows.workflows.internal.sql;

import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.WorkflowClient;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A signal on the caller's connection: the call {@code POST
 * /v1/workflows/{name}/runs/{runId}/signals/{event}} makes ({@code queue.workflow_signal}), checked
 * and answered the way that route does (404 for a run the workflow does not have, 409 for one that
 * has ended).
 */
public final class SqlSignals {

  /**
   * The signal is sent only when the run is the named workflow's: a run of another workflow yields
   * no row, and the function is never called for it, so nothing is stored.
   */
  private static final String SIGNAL =
      "SELECT s.outcome, s.signal_id FROM queue.workflow_get(?, ?::bigint) r"
          + " CROSS JOIN LATERAL queue.workflow_signal(r.run_id, ?, ?::jsonb, ?) s";

  private SqlSignals() {}

  public static WorkflowClient.SignalResult signal(
      Connection c, String workflow, long runId, String event, Object payload, String key) {
    if (runId < 1) {
      throw new IllegalArgumentException(
          "runId must be a run id (a positive integer), got " + runId);
    }
    if (!Names.isEventName(event)) {
      throw new IllegalArgumentException(
          "event must be 1 to 128 characters of A-Z, a-z, 0-9, \".\", \"_\", \":\", \"-\"");
    }
    if (event.startsWith("__")) {
      throw new IllegalArgumentException(
          "event names starting with \"__\" are the engine's own (such as a child's end)");
    }
    if (key != null && (key.isEmpty() || key.codePointCount(0, key.length()) > 255)) {
      throw new IllegalArgumentException("idempotencyKey must be 1 to 255 characters");
    }
    String json = SqlStarts.json(payload);
    try {
      return CallerTransaction.call(
          c,
          () -> {
            SchemaVersion.require(c);
            String outcome;
            long signalId;
            try (PreparedStatement ps = c.prepareStatement(SIGNAL)) {
              ps.setString(1, workflow);
              ps.setLong(2, runId);
              ps.setString(3, event);
              ps.setString(4, json);
              ps.setString(5, key);
              try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                  throw new ApiException(404, "workflow " + workflow + " has no run " + runId);
                }
                outcome = rs.getString(1);
                signalId = rs.getLong(2);
              }
            }
            return switch (outcome) {
              case "no such run" ->
                  throw new ApiException(404, "workflow " + workflow + " has no run " + runId);
              case "not running" ->
                  throw new ApiException(
                      409, "run " + runId + " has ended: " + status(c, workflow, runId));
              default -> new WorkflowClient.SignalResult(signalId, outcome);
            };
          });
    } catch (SQLException e) {
      throw SqlErrors.translate("signal to run " + runId + " of workflow " + workflow, e);
    }
  }

  /** The status of a run that has ended, for the refusal's words. */
  private static String status(Connection c, String workflow, long runId) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT status FROM queue.workflow_get(?, ?::bigint)")) {
      ps.setString(1, workflow);
      ps.setLong(2, runId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : "gone";
      }
    }
  }
}
