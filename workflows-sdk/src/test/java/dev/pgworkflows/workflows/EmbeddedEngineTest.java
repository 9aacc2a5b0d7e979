package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.engine.Engine;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application with no server: {@link PgWorkflows} migrates a blank database, serves workflows,
 * runs the background jobs under one leader per database, and refuses a schema it does not know.
 */
class EmbeddedEngineTest {

  private static Workflow<String, String> greeter() {
    return Workflow.define("greet", String.class, String.class)
        .run((ctx, who) -> ctx.step().run("hello", String.class, () -> "hello " + who));
  }

  @Test
  void aBlankDatabaseIsMigratedAndItsWorkflowsRunWithNoServer() {
    TestDatabase db = TestDatabase.blank();
    try (HikariDataSource ds = WithoutAServerTest.pool(db);
        PgWorkflows pgw = PgWorkflows.start(ds)) {
      pgw.serve(greeter());
      long runId = pgw.client().start("greet", "ada").runId();
      assertThat(
              pgw.client().runs().awaitResult("greet", runId, String.class, Duration.ofSeconds(30)))
          .isEqualTo("hello ada");
    }
  }

  /** A workflow whose runs sleep for a day: only a deadline ends them sooner. */
  static Workflow<String, String> stuck() {
    return Workflow.define("stuck", String.class, String.class)
        .run(
            (ctx, in) -> {
              ctx.step().sleep("forever", Duration.ofDays(1));
              return in;
            });
  }

  @Test
  void theBackgroundJobsRunWithNoServerDeadlinesEndRuns() {
    TestDatabase db = TestDatabase.fresh();
    Workflow<String, String> stuck = stuck();
    try (HikariDataSource ds = WithoutAServerTest.pool(db);
        PgWorkflows pgw = PgWorkflows.start(ds)) {
      pgw.serve(stuck);
      long runId =
          pgw.client()
              .start("stuck", "x", StartOptions.builder().deadline(Duration.ofSeconds(1)).build())
              .runId();
      Awaitility.await()
          .atMost(30, TimeUnit.SECONDS)
          .until(() -> pgw.client().runs().get("stuck", runId).status() == RunStatus.TIMED_OUT);
    }
  }

  @Test
  void anEngineAloneKeepsTheJobsRunningForRunsStartedInSql() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (HikariDataSource ds = WithoutAServerTest.pool(db);
        Engine engine = Engine.start(ds)) {
      long runId;
      try (Connection c = ds.getConnection()) {
        runId =
            WorkflowSql.start(
                    c,
                    "unserved",
                    "x",
                    StartOptions.builder().deadline(Duration.ofSeconds(1)).build())
                .runId();
      }
      Awaitility.await().atMost(20, TimeUnit.SECONDS).until(engine::leadsBackgroundJobs);
      Awaitility.await()
          .atMost(30, TimeUnit.SECONDS)
          .until(
              () -> {
                try (Connection c = ds.getConnection();
                    Statement s = c.createStatement();
                    java.sql.ResultSet rs =
                        s.executeQuery(
                            "SELECT status FROM queue.workflow_run WHERE run_id = " + runId)) {
                  return rs.next() && rs.getString(1).equals("timed_out");
                }
              });
    }
  }

  @Test
  void oneProcessLeadsTheBackgroundJobsAndAnotherTakesOverWhenItStops() {
    TestDatabase db = TestDatabase.fresh();
    try (HikariDataSource a = WithoutAServerTest.pool(db);
        HikariDataSource b = WithoutAServerTest.pool(db)) {
      PgWorkflows first = PgWorkflows.start(a);
      try (PgWorkflows second = PgWorkflows.start(b)) {
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> first.leadsBackgroundJobs() || second.leadsBackgroundJobs());
        PgWorkflows leader = first.leadsBackgroundJobs() ? first : second;
        PgWorkflows other = leader == first ? second : first;
        Awaitility.await().during(3, TimeUnit.SECONDS).until(() -> !other.leadsBackgroundJobs());
        leader.close();
        Awaitility.await().atMost(20, TimeUnit.SECONDS).until(other::leadsBackgroundJobs);
      } finally {
        first.close();
      }
    }
  }

  @Test
  void aSchemaOfAnotherVersionIsRefusedNamingBothVersions() throws Exception {
    TestDatabase blank = TestDatabase.blank();
    try (HikariDataSource ds = WithoutAServerTest.pool(blank)) {
      assertThatThrownBy(() -> PgWorkflows.builder(ds).migrate(false).start())
          .isInstanceOf(QueueSchemaException.class)
          .hasMessageContaining("not installed");
    }
    TestDatabase newer = TestDatabase.fresh();
    try (Connection c = newer.connect();
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO queue.schema_version (version, file_name, checksum)"
              + " SELECT max(version) + 1, 'from the future', 'x' FROM queue.schema_version");
    }
    try (HikariDataSource ds = WithoutAServerTest.pool(newer)) {
      assertThatThrownBy(() -> greeter().serve(WorkerOptions.dataSource(ds)))
          .isInstanceOf(QueueSchemaException.class)
          .satisfies(
              e -> {
                QueueSchemaException q = (QueueSchemaException) e;
                assertThat(q.foundVersion()).isEqualTo(q.expectedVersion() + 1);
                assertThat(e.getMessage())
                    .contains(Integer.toString(q.foundVersion()))
                    .contains(Integer.toString(q.expectedVersion()));
              });
    }
  }

  @Test
  void aJdbcWorkerKilledMidStepLosesNothing(@TempDir Path dir) throws Exception {
    TestDatabase db = TestDatabase.fresh();
    Path log = dir.resolve("executions.log");
    try (HikariDataSource ds = WithoutAServerTest.pool(db);
        WorkflowClient client = WorkflowClient.connect(ds)) {
      Process child =
          WorkerJvm.start(
              CrashyWorkflow.class,
              dir.resolve("child.out"),
              Map.of("PGW_TEST_USER", db.user(), "PGW_TEST_PASSWORD", db.password()),
              db.jdbcUrl(),
              log.toString());
      try {
        Started s = client.start("crashy", "go");
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> Files.exists(log) && Files.readAllLines(log).contains("two"));
        child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL mid-step
        assertThat(client.runs().get("crashy", s.runId()).status()).isEqualTo(RunStatus.RUNNING);
        Worker survivor = CrashyWorkflow.define(log, false).serve(WorkerOptions.dataSource(ds));
        try {
          assertThat(
                  client
                      .runs()
                      .awaitResult("crashy", s.runId(), String.class, Duration.ofSeconds(60)))
              .isEqualTo("o2t");
        } finally {
          survivor.close();
        }
        List<String> executions = Files.readAllLines(log);
        assertThat(executions).containsExactly("one", "two", "two", "three");
      } finally {
        child.destroyForcibly();
      }
    }
  }
}
