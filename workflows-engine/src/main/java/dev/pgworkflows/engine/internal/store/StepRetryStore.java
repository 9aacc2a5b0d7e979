package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.protocol.StepRetry;

/**
 * A run's retrying step and an operator's controls over its retries ({@code step_retries.sql}):
 * each call answers where the retries stand. A run that is not retrying the step named is a WF003
 * (409); a run that does not exist, a P0002 (404).
 */
public final class StepRetryStore {
  private final Sql sql;

  public StepRetryStore(Sql sql) {
    this.sql = sql;
  }

  public StepRetry get(long runId, String step) {
    return call("SELECT queue.workflow_step_retry(?::bigint, ?)::text", runId, step);
  }

  /** Pauses ({@code paused}) or resumes the step's retries. */
  public StepRetry pause(long runId, String step, boolean paused) {
    return call("SELECT queue.workflow_step_pause(?::bigint, ?, ?)::text", runId, step, paused);
  }

  /** Resets the attempts counted: the next attempt is the first. */
  public StepRetry reset(long runId, String step) {
    return call("SELECT queue.workflow_step_reset(?::bigint, ?)::text", runId, step);
  }

  /**
   * Sets the step's retry options for this run from {@code options}, a JSON object of the {@code
   * StepOptions} fields checked by the database; null or {@code {}} clears them.
   */
  public StepRetry options(long runId, String step, String options) {
    return call(
        "SELECT queue.workflow_step_options(?::bigint, ?, ?::jsonb)::text", runId, step, options);
  }

  private StepRetry call(String query, Object... args) {
    String json = sql.one(query, rs -> rs.getString(1), args).orElseThrow();
    return Json.read(json, StepRetry.class);
  }
}
