package dev.pgworkflows.engine.internal.store;

import java.util.Optional;

/** Why a run is not running now, as {@code queue.workflow_blockers} answers it. */
public final class BlockerStore {
  private final Sql sql;

  public BlockerStore(Sql sql) {
    this.sql = sql;
  }

  /**
   * The run's blockers as the JSON text of {@code {"runId", "status", "blockers"}}; empty when the
   * workflow has no such run. A worker not seen for {@code workerExpiryMs} serves nothing.
   */
  public Optional<String> blockers(String workflow, long runId, long workerExpiryMs) {
    return sql.one(
        "SELECT queue.workflow_blockers(?, ?::bigint, ?::bigint)::text",
        rs -> rs.getString(1),
        workflow,
        runId,
        workerExpiryMs);
  }
}
