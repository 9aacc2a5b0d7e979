package dev.pgworkflows.engine.internal.store;

import java.sql.Array;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Reads a run's state: the fold of its journal rows' state changes ({@code workflow_state}). */
public final class StateStore {
  private final Sql sql;

  public StateStore(Sql sql) {
    this.sql = sql;
  }

  /**
   * One key of a run's state.
   *
   * @param value the value as JSON text
   * @param version the version of the key: drawn for the journal row that last set it, so it only
   *     grows
   */
  public record Entry(String key, String value, long version) {}

  /** A run's state with whether the run is running, as one read sees both. */
  public record RunState(boolean running, List<Entry> state) {}

  /** The run's keys, in key order; none for a run without state (or without a row). */
  public List<Entry> state(long runId) {
    return sql.list(
        "SELECT key, value::text, version FROM queue.workflow_state(?::bigint)",
        rs -> new Entry(rs.getString(1), rs.getString(2), rs.getLong(3)),
        runId);
  }

  /** The state of each of {@code runIds} that still exists, in one query. */
  public Map<Long, RunState> states(Collection<Long> runIds) {
    record Row(long runId, boolean running, Entry entry) {}
    List<Row> rows =
        sql.onConnection(
            c -> {
              Array ids = c.createArrayOf("bigint", runIds.toArray());
              return Sql.list(
                  c,
                  "SELECT run_id, running, key, value::text, version"
                      + " FROM queue.workflow_states(?::bigint[])",
                  rs ->
                      new Row(
                          rs.getLong(1),
                          rs.getBoolean(2),
                          rs.getString(3) == null
                              ? null
                              : new Entry(rs.getString(3), rs.getString(4), rs.getLong(5))),
                  ids);
            });
    Map<Long, RunState> out = new HashMap<>();
    for (Row r : rows) {
      RunState s =
          out.computeIfAbsent(r.runId(), id -> new RunState(r.running(), new ArrayList<>()));
      if (r.entry() != null) {
        s.state().add(r.entry());
      }
    }
    return out;
  }
}
