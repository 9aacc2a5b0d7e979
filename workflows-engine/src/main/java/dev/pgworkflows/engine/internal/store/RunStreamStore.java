package dev.pgworkflows.engine.internal.store;

/**
 * A run's streams through {@code queue.run_stream_*}; each answer is the JSON text the function
 * builds, passed on as it is.
 */
public final class RunStreamStore {
  private final Sql sql;

  public RunStreamStore(Sql sql) {
    this.sql = sql;
  }

  /** Appends entries (a JSON array) and closes the stream when asked; see run_stream_write. */
  public String write(String workflow, long runId, String stream, String entries, boolean close) {
    return sql.one(
            "SELECT queue.run_stream_write(?, ?::bigint, ?, ?::jsonb, ?)::text",
            rs -> rs.getString(1),
            workflow,
            runId,
            stream,
            entries,
            close)
        .orElseThrow();
  }

  /** Up to {@code limit} entries from offset {@code from}, with the stream's state. */
  public String read(String workflow, long runId, String stream, long from, int limit) {
    return sql.one(
            "SELECT queue.run_stream_read(?, ?::bigint, ?, ?::bigint, ?)::text",
            rs -> rs.getString(1),
            workflow,
            runId,
            stream,
            from,
            limit)
        .orElseThrow();
  }

  /** The run's streams. */
  public String list(String workflow, long runId) {
    return sql.one(
            "SELECT queue.run_stream_list(?, ?::bigint)::text",
            rs -> rs.getString(1),
            workflow,
            runId)
        .orElseThrow();
  }
}
