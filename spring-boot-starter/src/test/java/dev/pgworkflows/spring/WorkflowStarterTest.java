package dev.pgworkflows.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testkit.WorkflowTestKit;
import dev.pgworkflows.testkit.WorkflowTestKit.Role;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.WorkflowClient;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Runs started in the application's Spring transactions, on the server's own database. */
class WorkflowStarterTest {
  private static WorkflowTestKit kit;

  @BeforeAll
  static void startServer() {
    kit = WorkflowTestKit.start();
  }

  @AfterAll
  static void stopServer() {
    kit.close();
  }

  private static ApplicationContextRunner runner() {
    WorkflowTestKit.Database db = kit.database();
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                PgWorkflowsAutoConfiguration.class,
                DataSourceAutoConfiguration.class,
                DataSourceTransactionManagerAutoConfiguration.class))
        .withPropertyValues(
            "pgworkflows.url=" + kit.url(),
            "pgworkflows.token=" + kit.token(Role.CLIENT),
            "pgworkflows.worker.enabled=false",
            "spring.datasource.url=" + db.jdbcUrl(),
            "spring.datasource.username=" + db.user(),
            "spring.datasource.password=" + db.password());
  }

  @Test
  void aRunStartedInACommittedTransactionExistsAfterTheCommit() {
    runner()
        .run(
            ctx -> {
              WorkflowStarter starter = ctx.getBean(WorkflowStarter.class);
              TransactionTemplate tx =
                  new TransactionTemplate(ctx.getBean(PlatformTransactionManager.class));
              Started run = tx.execute(s -> starter.startInTransaction("tx-commit", "in"));
              WorkflowClient client = ctx.getBean(WorkflowClient.class);
              assertThat(client.runs().get("tx-commit", run.runId()).status())
                  .isEqualTo(RunStatus.RUNNING);
              // Its first task waits on the workflow's queue for a worker (none runs here).
              assertThat(messagesOn(JdbcClient.create(ctx.getBean(DataSource.class)), "tx-commit"))
                  .isEqualTo(1);
            });
  }

  @Test
  void aRunStartedInARolledBackTransactionNeverExists() {
    runner()
        .run(
            ctx -> {
              WorkflowStarter starter = ctx.getBean(WorkflowStarter.class);
              TransactionTemplate tx =
                  new TransactionTemplate(ctx.getBean(PlatformTransactionManager.class));
              tx.executeWithoutResult(
                  s -> {
                    starter.startInTransaction("tx-rollback", "in");
                    s.setRollbackOnly();
                  });
              JdbcClient db = JdbcClient.create(ctx.getBean(DataSource.class));
              assertThat(runsOf(db, "tx-rollback")).isZero();
              assertThat(messagesOn(db, "tx-rollback")).isZero();
            });
  }

  @Test
  void aSignalSentInACommittedTransactionIsStoredAndOneRolledBackIsNot() {
    runner()
        .run(
            ctx -> {
              WorkflowStarter starter = ctx.getBean(WorkflowStarter.class);
              TransactionTemplate tx =
                  new TransactionTemplate(ctx.getBean(PlatformTransactionManager.class));
              long runId = tx.execute(s -> starter.startInTransaction("tx-signal", "in")).runId();
              tx.executeWithoutResult(
                  s -> {
                    starter.signalInTransaction("tx-signal", runId, "rolled-back", "x");
                    s.setRollbackOnly();
                  });
              WorkflowClient.SignalResult sent =
                  tx.execute(s -> starter.signalInTransaction("tx-signal", runId, "kept", "y"));
              assertThat(sent.outcome()).isIn("buffered", "delivered");
              JdbcClient db = JdbcClient.create(ctx.getBean(DataSource.class));
              assertThat(
                      db.sql("SELECT event FROM queue.workflow_signal WHERE run_id = ?")
                          .param(runId)
                          .query(String.class)
                          .list())
                  .containsExactly("kept");
            });
  }

  @Test
  void inAReadOnlyTransactionItRefusesAndStartsNothing() {
    runner()
        .run(
            ctx -> {
              WorkflowStarter starter = ctx.getBean(WorkflowStarter.class);
              TransactionTemplate tx =
                  new TransactionTemplate(ctx.getBean(PlatformTransactionManager.class));
              tx.setReadOnly(true);
              assertThatThrownBy(
                      () ->
                          tx.executeWithoutResult(
                              s -> starter.startInTransaction("tx-read-only", "in")))
                  .isInstanceOf(IllegalTransactionStateException.class)
                  .hasMessage(
                      "startInTransaction writes, but the current transaction is read-only");
              assertThat(runsOf(JdbcClient.create(ctx.getBean(DataSource.class)), "tx-read-only"))
                  .isZero();
            });
  }

  /**
   * A transaction on another resource, while the application's pool hands out connections with
   * auto-commit off: such a connection is in no managed transaction, and closing it would roll the
   * start back silently, so the call refuses instead.
   */
  @Test
  void inATransactionOnAnotherDataSourceItRefusesAndStartsNothing() {
    WorkflowTestKit.Database db = kit.database();
    DataSource other = new DriverManagerDataSource(db.jdbcUrl(), db.user(), db.password());
    runner()
        .withPropertyValues("spring.datasource.hikari.auto-commit=false")
        .run(
            ctx -> {
              WorkflowStarter starter = ctx.getBean(WorkflowStarter.class);
              TransactionTemplate tx =
                  new TransactionTemplate(new DataSourceTransactionManager(other));
              assertThatThrownBy(
                      () ->
                          tx.executeWithoutResult(
                              s -> starter.startInTransaction("tx-other", "in")))
                  .isInstanceOf(IllegalTransactionStateException.class)
                  .hasMessageStartingWith(
                      "startInTransaction needs the current transaction to be on the"
                          + " application's DataSource");
              assertThat(runsOf(JdbcClient.create(other), "tx-other")).isZero();
            });
  }

  @Test
  void outsideATransactionItRefusesAndStartsNothing() {
    runner()
        .run(
            ctx -> {
              WorkflowStarter starter = ctx.getBean(WorkflowStarter.class);
              assertThatThrownBy(() -> starter.startInTransaction("tx-none", "in"))
                  .isInstanceOf(IllegalTransactionStateException.class)
                  .hasMessage(
                      "startInTransaction needs a transaction to join: call it from a"
                          + " @Transactional method (or use WorkflowClient to start on its own)");
              assertThat(runsOf(JdbcClient.create(ctx.getBean(DataSource.class)), "tx-none"))
                  .isZero();
            });
  }

  /** Messages on the workflow's queue {@code __wf_<name>} (none while its table does not exist). */
  private static long messagesOn(JdbcClient db, String workflow) {
    String table = "q___wf_" + workflow;
    boolean exists =
        db.sql("SELECT to_regclass(format('queue.%I', ?::text)) IS NOT NULL")
            .param(table)
            .query(Boolean.class)
            .single();
    if (!exists) {
      return 0;
    }
    return db.sql("SELECT count(*) FROM queue.\"" + table + "\"").query(Long.class).single();
  }

  private static long runsOf(JdbcClient db, String workflow) {
    return db.sql("SELECT count(*) FROM queue.workflow_run WHERE workflow_name = ?")
        .param(workflow)
        .query(Long.class)
        .single();
  }
}
