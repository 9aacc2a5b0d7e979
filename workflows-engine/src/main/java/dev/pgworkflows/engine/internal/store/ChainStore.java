package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.protocol.ContinueAsNewOutcome;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.StepRecord;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Continue-as-new ({@code workflow_continue_as_new}) and the chains it makes ({@code
 * workflow_chain}).
 */
public final class ChainStore {
  private final Sql sql;
  private final int maxRetentionDays;

  public ChainStore(Sql sql, int maxRetentionDays) {
    this.sql = sql;
    this.maxRetentionDays = maxRetentionDays;
  }

  /**
   * Ends the run under its lease and starts its successor with {@code input} (JSON text), {@code
   * step} journaled first when given; all in one transaction. {@code traceContext} is the
   * successor's trace identity (null: none).
   */
  public ContinueAsNewOutcome continueAsNew(
      long runId,
      long messageId,
      long receipt,
      String input,
      StepRecord step,
      String traceContext) {
    String stepJson = null;
    if (step != null) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("name", step.name());
      row.put("kind", step.kind());
      row.put("output", step.output());
      if (step.error() != null && !step.error().isNull()) {
        row.put("error", step.error());
      }
      if (step.state() != null && !step.state().isNull()) {
        row.put("state", step.state());
      }
      if (step.startedAt() != null) {
        row.put("startedAt", step.startedAt().toString());
      }
      stepJson = Json.write(row);
    }
    return sql.one(
            "SELECT outcome, continued_to FROM queue.workflow_continue_as_new(?::bigint, ?::bigint,"
                + " ?::bigint, ?::jsonb, ?::jsonb, ?, ?)",
            rs -> new ContinueAsNewOutcome(rs.getString(1), rs.getObject(2, Long.class)),
            runId,
            messageId,
            receipt,
            input,
            stepJson,
            maxRetentionDays,
            traceContext)
        .orElseThrow();
  }

  /**
   * A page of the runs of the chain {@code runId} belongs to, first to last, after {@code after}.
   */
  public List<Run> chain(long runId, Long after, int limit) {
    return sql.list(
        "SELECT r.*, "
            + RunStore.PARENT_WORKFLOW
            + " FROM queue.workflow_chain(?::bigint, ?::bigint, ?) r ORDER BY r.run_id",
        rs -> Rows.run(rs).run(),
        runId,
        after,
        limit);
  }

  /**
   * The last run of the chain {@code runId} belongs to (the run itself when it is in no chain),
   * found through the chain's first run, so runs retention took from the chain do not matter.
   */
  public Run last(long runId) {
    return sql.one(
            "SELECT r.*, "
                + RunStore.PARENT_WORKFLOW
                + " FROM queue.workflow_chain_last(?::bigint) r",
            rs -> Rows.run(rs).run(),
            runId)
        .orElseThrow();
  }
}
