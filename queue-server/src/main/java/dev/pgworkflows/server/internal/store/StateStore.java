package dev.pgworkflows.server.internal.store;

import java.util.List;

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
   * @param version the seq of the journal row that last set the key
   */
  public record Entry(String key, String value, long version) {}

  /** The run's keys, in key order; none for a run without state (or without a row). */
  public List<Entry> state(long runId) {
    return sql.list(
        "SELECT key, value::text, version FROM queue.workflow_state(?::bigint)",
        rs -> new Entry(rs.getString(1), rs.getString(2), rs.getLong(3)),
        runId);
  }
}
