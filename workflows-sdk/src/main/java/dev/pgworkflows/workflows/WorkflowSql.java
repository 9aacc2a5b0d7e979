package dev.pgworkflows.workflows;

import dev.pgworkflows.workflows.internal.sql.SqlSignals;
import dev.pgworkflows.workflows.internal.sql.SqlStarts;
import java.sql.Connection;

/**
 * Starts and signals runs through the caller's own JDBC connection, inside the caller's
 * transaction, by the same SQL functions the server's routes call ({@code queue.workflow_start},
 * {@code queue.workflow_signal}) with the same checks. The connection must reach the database a
 * pgworkflows server runs on; nothing here talks to the server.
 *
 * <ul>
 *   <li><b>Commit</b>: the run (or the signal) exists from the commit on, and workers hear of it
 *       then: the functions register their wake-up with {@code NOTIFY}, which PostgreSQL sends at
 *       commit.
 *   <li><b>Rollback</b>: nothing happened: no run, no message on {@code __wf_<name>}, no signal, no
 *       wake-up.
 *   <li><b>Retry</b>: a transaction run again (after a serialization failure, say) starts a new run
 *       unless the start has an idempotency key, which answers the run the key started (with {@link
 *       Started#created()} false) once that run has committed; a signal with an idempotency key is
 *       stored once.
 * </ul>
 *
 * <p>With auto-commit on, each call is its own transaction. In a transaction, each call runs inside
 * a savepoint, so a call refused (an exception thrown) leaves the transaction usable and the
 * caller's own earlier work in it intact. The calls assume READ COMMITTED, PostgreSQL's default: a
 * debounced start elsewhere throws {@link IllegalStateException}, and a start under REPEATABLE READ
 * or SERIALIZABLE whose idempotency key another transaction committed after this one's snapshot
 * fails with a serialization failure (SQLState 40001), to be run again.
 *
 * <p>Before its first call on a database, and again once a minute, the API checks that the
 * database's {@code queue} schema is at the version this SDK was built for, with the functions it
 * calls ({@link QueueSchemaException} otherwise, with nothing written). The start function PREPAREs
 * a statement per workflow on the caller's session ({@code queue.prepared_sql}), which stays there,
 * as the server's own connections keep it, until the session ends.
 *
 * <p>When the caller is inside a valid OpenTelemetry span ({@code Span.current()}), a start records
 * it as the run's parent, as a start through the server's route does, so the run's span joins the
 * caller's trace.
 *
 * <p>A start applies the retention ceiling the servers on the database were configured with ({@code
 * WORKFLOWS_MAX_RETENTION_DAYS}, which each writes into the database at startup; the last one
 * started wins; 365 when none has), capping a longer retention as the server does. A delayed or
 * debounced start is handed out within the servers' fallback poll interval ({@code
 * WORKFLOWS_FALLBACK_POLL_MS}) of its due time, where a server's own start sets a timer for it.
 */
public final class WorkflowSql {
  private WorkflowSql() {}

  /** As {@link #start(Connection, String, Object, StartOptions)}, with no options. */
  public static Started start(Connection connection, String workflow, Object input) {
    return start(connection, workflow, input, StartOptions.NONE);
  }

  /** As {@link #start(Connection, Workflow, Object, StartOptions)}, with no options. */
  public static <I, O> Started start(Connection connection, Workflow<I, O> workflow, I input) {
    return start(connection, workflow, input, StartOptions.NONE);
  }

  /**
   * Starts a run of {@code workflow} with {@code input} (serialized as {@link WorkflowClient}
   * does); {@code options} null means none. Every start option applies as in {@link
   * WorkflowClient#start(String, Object, StartOptions)}, a retention above the ceiling capped.
   *
   * @throws IllegalArgumentException a bad argument, naming it (the server would answer 400);
   *     nothing was written
   * @throws IllegalStateException a debounced start in a transaction other than READ COMMITTED
   * @throws QueueSchemaException the database has no queue schema or another version of it
   * @throws ApiException 409 where the server would answer it
   * @throws WorkflowException the database failed the call; {@link Throwable#getCause()} is the
   *     {@code SQLException}, whose SQLState 40001, 40P01 or 08xxx says that running the
   *     transaction again may work
   */
  public static Started start(
      Connection connection, String workflow, Object input, StartOptions options) {
    require(connection, "connection");
    require(workflow, "workflow");
    Workflow.checkName(workflow);
    return SqlStarts.start(
        connection, workflow, input, options == null ? StartOptions.NONE : options);
  }

  /**
   * Starts a run of a definition, with its retention (capped at the ceiling) and deadline unless
   * the options say otherwise, as {@link WorkflowClient#start(Workflow, Object, StartOptions)}
   * does.
   */
  public static <I, O> Started start(
      Connection connection, Workflow<I, O> workflow, I input, StartOptions options) {
    require(workflow, "workflow");
    StartOptions o = options == null ? StartOptions.NONE : options;
    return start(connection, workflow.name(), input, o.withDefaultsOf(workflow));
  }

  /**
   * Sends {@code payload} as event {@code event} to run {@code runId} of {@code workflow}: on
   * commit it is delivered when it fits the run's wait, otherwise kept for the first later wait it
   * fits. A run the workflow does not have throws {@link ApiException} 404, one that has ended 409
   * naming its status, as the server's route answers; other failures as for {@link
   * #start(Connection, String, Object, StartOptions)}.
   */
  public static WorkflowClient.SignalResult signal(
      Connection connection, String workflow, long runId, String event, Object payload) {
    return signal(connection, workflow, runId, event, payload, null);
  }

  /**
   * As {@link #signal(Connection, String, long, String, Object)}; a key already sent to the run
   * stores nothing and answers {@code duplicate} with the first signal's id.
   */
  public static WorkflowClient.SignalResult signal(
      Connection connection,
      String workflow,
      long runId,
      String event,
      Object payload,
      String idempotencyKey) {
    require(connection, "connection");
    require(workflow, "workflow");
    Workflow.checkName(workflow);
    return SqlSignals.signal(connection, workflow, runId, event, payload, idempotencyKey);
  }

  private static void require(Object value, String name) {
    if (value == null) {
      throw new IllegalArgumentException(name + " must not be null");
    }
  }
}
