package dev.pgworkflows.engine.internal.store;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.Signal;
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
        rs.getString("trace_context"),
        rs.getString("step_options"));
  }

  /**
   * A row of {@code workflow_run} with its parent's workflow as {@code parent_workflow}, and the
   * trace context the API does not show.
   */
  static StoredRun run(ResultSet rs) throws SQLException {
    Timestamp completed = rs.getTimestamp("completed_at");
    long parentId = rs.getLong("parent_run_id");
    Run.Parent parent =
        rs.wasNull()
            ? null
            : new Run.Parent(
                parentId, rs.getString("parent_workflow"), rs.getString("parent_step"));
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
            waiting(rs),
            rs.getTimestamp("started_at").toInstant(),
            completed == null ? null : completed.toInstant(),
            parent,
            null,
            instant(rs, "due_at"),
            instant(rs, "deadline_at"),
            rs.getString("debounce_key"),
            rs.getString("concurrency_key"),
            rs.getObject("priority", Integer.class),
            rs.getTimestamp("paused_at") != null,
            forkedFrom(rs),
            rs.getObject("continued_from", Long.class),
            rs.getObject("continued_to", Long.class));
    return new StoredRun(run, rs.getString("trace_context"));
  }

  /** The run and step a forked run came from; null for a run that is not a fork. */
  private static Run.ForkedFrom forkedFrom(ResultSet rs) throws SQLException {
    long origin = rs.getLong("forked_from_run");
    return rs.wasNull() ? null : new Run.ForkedFrom(origin, rs.getString("forked_from_step"));
  }

  private static java.time.Instant instant(ResultSet rs, String column) throws SQLException {
    Timestamp t = rs.getTimestamp(column);
    return t == null ? null : t.toInstant();
  }

  /**
   * What the run waits for, if it waits: one event, or its arms each with whether it has fired
   * (from {@code wait_fired}, null where an arm has not).
   */
  private static Run.Waiting waiting(ResultSet rs) throws SQLException {
    String step = rs.getString("wait_step");
    if (step == null) {
      return null;
    }
    String arms = rs.getString("wait_arms");
    if (arms == null) {
      return new Run.Waiting(step, rs.getString("wait_event"), rs.getString("wait_match"));
    }
    try {
      JsonNode fired = Json.MAPPER.readTree(String.valueOf(rs.getString("wait_fired")));
      ArrayNode shown = Json.MAPPER.createArrayNode();
      int i = 0;
      for (JsonNode arm : Json.MAPPER.readTree(arms)) {
        ObjectNode a = shown.addObject();
        a.set("event", arm.get("event"));
        if (arm.hasNonNull("match")) {
          a.set("match", arm.get("match"));
        }
        a.put("fired", fired.hasNonNull(i));
        i++;
      }
      boolean all = rs.getBoolean("wait_all");
      return new Run.Waiting(step, null, null, Json.write(shown), all);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("run " + rs.getLong("run_id") + " has a malformed wait", e);
    }
  }

  /** A row of {@code workflow_signals}. */
  static Signal signal(ResultSet rs) throws SQLException {
    Timestamp delivered = rs.getTimestamp("delivered_at");
    String payload = rs.getString("payload");
    return new Signal(
        rs.getLong("signal_id"),
        rs.getString("event"),
        payload == null ? "null" : payload,
        rs.getString("idempotency_key"),
        rs.getTimestamp("sent_at").toInstant(),
        delivered == null ? null : delivered.toInstant(),
        rs.getString("delivered_to"));
  }
}
