package dev.pgworkflows.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testkit.WorkflowTestKit;
import dev.pgworkflows.testkit.WorkflowTestKit.Role;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.WorkflowClient;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Runs started in the application's Spring transactions, on the server's own database. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
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
              Started run =
                  tx.execute(s -> starter.startInTransaction("tx-commit", "in", StartOptions.NONE));
              WorkflowClient client = ctx.getBean(WorkflowClient.class);
              assertThat(client.get("tx-commit", run.runId()).status())
                  .isEqualTo(RunStatus.RUNNING);
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
                    starter.startInTransaction("tx-rollback", "in", StartOptions.NONE);
                    s.setRollbackOnly();
                  });
              assertThat(runsOf(JdbcClient.create(ctx.getBean(DataSource.class)), "tx-rollback"))
                  .isZero();
            });
  }

  @Test
  void outsideATransactionItRefusesAndStartsNothing() {
    runner()
        .run(
            ctx -> {
              WorkflowStarter starter = ctx.getBean(WorkflowStarter.class);
              assertThatThrownBy(
                      () -> starter.startInTransaction("tx-none", "in", StartOptions.NONE))
                  .isInstanceOf(IllegalTransactionStateException.class)
                  .hasMessage(
                      "startInTransaction needs a transaction to join: call it from a"
                          + " @Transactional method (or use WorkflowClient to start on its own)");
              assertThat(runsOf(JdbcClient.create(ctx.getBean(DataSource.class)), "tx-none"))
                  .isZero();
            });
  }

  private static long runsOf(JdbcClient db, String workflow) {
    return db.sql("SELECT count(*) FROM queue.workflow_run WHERE workflow_name = ?")
        .param(workflow)
        .query(Long.class)
        .single();
  }
}
