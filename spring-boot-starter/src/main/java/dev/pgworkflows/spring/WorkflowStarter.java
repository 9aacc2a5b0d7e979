package dev.pgworkflows.spring;

import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import dev.pgworkflows.workflows.WorkflowSql;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Function;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Starts runs and sends signals in the application's current Spring transaction, on its {@link
 * DataSource}, which must be the server's database: the run starts if and only if that transaction
 * commits, together with the application's own writes (workers hear of it at commit). The
 * connection is the transaction's own ({@link DataSourceUtils#getConnection}), so a call inside a
 * {@code @Transactional} method joins it.
 *
 * <p>There must be a transaction: without one each call would commit on its own, which is what
 * {@link WorkflowClient} is for, so a call outside one throws {@link
 * IllegalTransactionStateException} and starts nothing, as does a call in a read-only transaction
 * or in one whose transaction manager holds no connection of this DataSource (a transaction on
 * another resource).
 */
public final class WorkflowStarter {
  private final DataSource dataSource;

  public WorkflowStarter(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Starts a run of {@code workflow}, with no options, when the current transaction commits. */
  public Started startInTransaction(String workflow, Object input) {
    return inTransaction("startInTransaction", c -> WorkflowSql.start(c, workflow, input));
  }

  /** Starts a run of {@code workflow} when the current transaction commits. */
  public Started startInTransaction(String workflow, Object input, StartOptions options) {
    return inTransaction("startInTransaction", c -> WorkflowSql.start(c, workflow, input, options));
  }

  /** As {@link #startInTransaction(String, Object)}, with the definition's settings. */
  public <I, O> Started startInTransaction(Workflow<I, O> workflow, I input) {
    return inTransaction("startInTransaction", c -> WorkflowSql.start(c, workflow, input));
  }

  /**
   * As {@link #startInTransaction(String, Object, StartOptions)}, with the definition's settings.
   */
  public <I, O> Started startInTransaction(Workflow<I, O> workflow, I input, StartOptions options) {
    return inTransaction("startInTransaction", c -> WorkflowSql.start(c, workflow, input, options));
  }

  /** Sends {@code event} to a run when the current transaction commits. */
  public WorkflowClient.SignalResult signalInTransaction(
      String workflow, long runId, String event, Object payload) {
    return inTransaction(
        "signalInTransaction", c -> WorkflowSql.signal(c, workflow, runId, event, payload));
  }

  private <T> T inTransaction(String what, Function<Connection, T> call) {
    if (!TransactionSynchronizationManager.isActualTransactionActive()) {
      throw new IllegalTransactionStateException(
          what
              + " needs a transaction to join: call it from a @Transactional method (or use"
              + " WorkflowClient to start on its own)");
    }
    if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
      throw new IllegalTransactionStateException(
          what + " writes, but the current transaction is read-only");
    }
    if (TransactionSynchronizationManager.getResource(dataSource) == null) {
      // A transaction on another resource (another DataSource, say) has bound no connection of
      // this one: DataSourceUtils would hand out a fresh connection whose fate no transaction
      // manager decides (committed on its own, or closed and so rolled back, silently).
      throw new IllegalTransactionStateException(
          what
              + " needs the current transaction to be on the application's DataSource (a"
              + " DataSourceTransactionManager or JpaTransactionManager for it)");
    }
    Connection c = DataSourceUtils.getConnection(dataSource);
    try {
      if (c.getAutoCommit()) {
        throw new IllegalTransactionStateException(
            what
                + " needs the current transaction to be on the application's DataSource, whose"
                + " connection here commits each statement on its own");
      }
      return call.apply(c);
    } catch (SQLException e) {
      throw new IllegalStateException(what + ": " + e.getMessage(), e);
    } finally {
      DataSourceUtils.releaseConnection(c, dataSource);
    }
  }
}
