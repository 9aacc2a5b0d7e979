package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.sql.Migrator;
import dev.pgworkflows.testing.Psql;
import dev.pgworkflows.testing.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The roles of {@code sql/roles.sql}: a login with {@code pgworkflows_worker} serves workflows and
 * runs the background jobs, a login with {@code pgworkflows_client} starts, signals and reads runs,
 * neither reads or writes a table, and a login with neither is told which role it lacks.
 */
class LeastPrivilegeRolesTest {
  /** The logins of docs/security.md's block, and their password there. */
  private static final String WORKER = "orders_worker";

  private static final String CLIENT = "orders_web";
  private static final String NO_GRANTS = "orders_nobody";
  private static final String PASSWORD = "change-me";
  private static final String HEADING = "## Least privilege in the database";

  private static TestDatabase db;

  /**
   * That page's block as printed, through psql from the repository's root (where CI installs it);
   * without psql, the same statements over JDBC with the script it includes read in its place.
   */
  @BeforeAll
  static void createRolesAndLogins() throws Exception {
    db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      // Roles belong to the cluster: a database that ran this before may have left the logins.
      s.execute("DROP ROLE IF EXISTS " + WORKER + ", " + CLIENT + ", " + NO_GRANTS);
      s.execute("CREATE ROLE " + NO_GRANTS + " LOGIN PASSWORD '" + PASSWORD + "'");
    }
    String block =
        TransactionalStartPageTest.block(Path.of("../docs/security.md"), HEADING, "```sql");
    assertThat(block).contains("\\i sql/roles.sql").contains(WORKER).contains(CLIENT);
    if (Psql.installed()) {
      TransactionalStartPageTest.psql(db, block, Path.of(".."));
      return;
    }
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute(block.replace("\\i sql/roles.sql", Migrator.rolesScript()));
    }
  }

  private static HikariDataSource as(String login) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(db.jdbcUrl());
    c.setUsername(login);
    c.setPassword(PASSWORD);
    c.setMaximumPoolSize(6);
    return new HikariDataSource(c);
  }

  private static Workflow<String, String> approval() {
    return Workflow.define("approval", String.class, String.class)
        .run(
            (ctx, who) -> {
              String by =
                  ctx.step()
                      .waitForEvent("approved", String.class, Match.any(), Duration.ofHours(1))
                      .orElse("nobody");
              return ctx.step().run("greet", String.class, () -> who + " approved by " + by);
            });
  }

  @Test
  void aWorkerLoginServesAndRunsTheJobsWhileAClientLoginStartsSignalsAndReads() throws Exception {
    Workflow<String, String> stuck = EmbeddedEngineTest.stuck();
    try (HikariDataSource workerDs = as(WORKER);
        HikariDataSource clientDs = as(CLIENT);
        PgWorkflows worker = PgWorkflows.builder(workerDs).migrate(false).start();
        WorkflowClient client = WorkflowClient.connect(clientDs)) {
      worker.serve(approval());
      worker.serve(stuck);
      long runId = client.start("approval", "ada").runId();
      Awaitility.await()
          .atMost(30, TimeUnit.SECONDS)
          .until(() -> client.runs().get("approval", runId).waitingFor() != null);
      client.signal("approval", runId, "approved", "grace");
      assertThat(client.runs().awaitResult("approval", runId, String.class, Duration.ofSeconds(30)))
          .isEqualTo("ada approved by grace");

      // A start in the client's own transaction, as WorkflowSql makes it.
      long inTransaction;
      try (Connection c = clientDs.getConnection()) {
        c.setAutoCommit(false);
        inTransaction = WorkflowSql.start(c, "approval", "bob").runId();
        c.commit();
      }
      Awaitility.await()
          .atMost(30, TimeUnit.SECONDS)
          .until(() -> client.runs().get("approval", inTransaction).waitingFor() != null);
      try (Connection c = clientDs.getConnection()) {
        WorkflowSql.signal(c, "approval", inTransaction, "approved", "eve");
      }
      assertThat(
              client
                  .runs()
                  .awaitResult("approval", inTransaction, String.class, Duration.ofSeconds(30)))
          .isEqualTo("bob approved by eve");

      // The deadline job runs in the worker's process, as the worker's login.
      long late =
          client
              .start("stuck", "x", StartOptions.builder().deadline(Duration.ofSeconds(1)).build())
              .runId();
      Awaitility.await()
          .atMost(30, TimeUnit.SECONDS)
          .until(() -> client.runs().get("stuck", late).status() == RunStatus.TIMED_OUT);
      assertThat(worker.leadsBackgroundJobs()).isTrue();
    }
  }

  @Test
  void neitherRoleMayReadOrWriteATableNorCallTheOtherSidesFunctions() throws Exception {
    long runs = count("SELECT count(*) FROM queue.workflow_run");
    for (String login : List.of(WORKER, CLIENT)) {
      try (Connection c = DriverManager.getConnection(db.jdbcUrl(), login, PASSWORD)) {
        assertRefused(c, "SELECT * FROM queue.workflow_run");
        assertRefused(c, "SELECT * FROM queue.workflow_step");
        assertRefused(c, "DELETE FROM queue.workflow_run");
        assertRefused(c, "INSERT INTO queue.setting (name, value) VALUES ('x', 'y')");
        assertRefused(c, "SELECT queue.setting_put('max_retention_days', '1')");
        assertRefused(c, "SELECT * FROM queue.workflow_fork(1, 'x', null, false)");
      }
    }
    try (Connection c = DriverManager.getConnection(db.jdbcUrl(), CLIENT, PASSWORD)) {
      assertRefused(c, "SELECT * FROM queue.workflow_poll('approval', ARRAY[1], 1, 30)");
      assertRefused(c, "SELECT * FROM queue.sweep_workflow_runs()");
    }
    try (Connection c = DriverManager.getConnection(db.jdbcUrl(), WORKER, PASSWORD)) {
      assertRefused(c, "SELECT * FROM queue.workflow_cancel(1)");
      assertRefused(c, "SELECT * FROM queue.workflow_list('approval')");
    }
    assertThat(count("SELECT count(*) FROM queue.workflow_run")).isEqualTo(runs);
  }

  @Test
  void everyFunctionARoleMayCallRunsAsItsOwnerWithAFixedSearchPath() throws Exception {
    List<String> loose = new ArrayList<>();
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT r.rolname || ': ' || p.oid::regprocedure"
                    + " FROM pg_proc p CROSS JOIN pg_roles r"
                    + " WHERE p.pronamespace = 'queue'::regnamespace"
                    + " AND r.rolname IN ('pgworkflows_worker', 'pgworkflows_client')"
                    + " AND has_function_privilege(r.oid, p.oid, 'EXECUTE')"
                    + " AND NOT (p.prosecdef AND EXISTS (SELECT 1 FROM unnest(p.proconfig) g"
                    + " WHERE g = 'search_path=queue, pg_temp'))")) {
      while (rs.next()) {
        loose.add(rs.getString(1));
      }
    }
    assertThat(loose).isEmpty();
    assertThat(
            count(
                "SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'queue'::regnamespace"
                    + " AND has_function_privilege('pgworkflows_client', p.oid, 'EXECUTE')"))
        .isGreaterThan(10);
  }

  @Test
  void aLoginWithoutTheGrantsIsToldWhichRoleItLacksAndWritesNothing() throws Exception {
    long runs = count("SELECT count(*) FROM queue.workflow_run");
    try (HikariDataSource none = as(NO_GRANTS);
        HikariDataSource clientOnly = as(CLIENT)) {
      assertThatThrownBy(() -> WorkflowClient.connect(none))
          .isInstanceOf(MissingGrantException.class)
          .hasMessageContaining("\"" + NO_GRANTS + "\"")
          .hasMessageContaining("grant it the role pgworkflows_client");
      assertThatThrownBy(() -> PgWorkflows.builder(none).migrate(false).start())
          .isInstanceOf(MissingGrantException.class)
          .hasMessageContaining("grant it the role pgworkflows_worker");
      try (Connection c = none.getConnection()) {
        assertThatThrownBy(() -> WorkflowSql.start(c, "approval", "x"))
            .isInstanceOf(MissingGrantException.class)
            .hasMessageContaining("pgworkflows_client");
      }
      // A client's login has the schema but not the worker's functions.
      assertThatThrownBy(() -> PgWorkflows.builder(clientOnly).migrate(false).start())
          .isInstanceOf(MissingGrantException.class)
          .hasMessageContaining("\"" + CLIENT + "\" may not execute queue.workflow_poll")
          .hasMessageContaining("grant it the role pgworkflows_worker")
          .satisfies(
              e ->
                  assertThat(((MissingGrantException) e).missingRole())
                      .isEqualTo("pgworkflows_worker"));
    }
    assertThat(count("SELECT count(*) FROM queue.workflow_run")).isEqualTo(runs);
  }

  private static void assertRefused(Connection c, String sql) {
    assertThatThrownBy(
            () -> {
              try (Statement s = c.createStatement()) {
                s.execute(sql);
              }
            })
        .as(sql)
        .isInstanceOf(SQLException.class)
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("42501"));
  }

  private static long count(String sql) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
