package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Workers and clients over JDBC, with no server between them and the database, on the same database
 * as a server: runs started one way are served the other way, workers of both kinds share a
 * workflow's runs, and the server lists the JDBC workers.
 */
class WithoutAServerTest {
  @RegisterExtension static final LiveServer server = new LiveServer();
  private static HikariDataSource dataSource;
  private static WorkflowClient jdbc;

  static HikariDataSource pool(TestDatabase db) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(db.jdbcUrl());
    c.setUsername(db.user());
    c.setPassword(db.password());
    c.setMaximumPoolSize(8);
    return new HikariDataSource(c);
  }

  @BeforeAll
  static void connect() {
    dataSource = pool(server.database());
    jdbc = WorkflowClient.connect(dataSource);
  }

  @AfterAll
  static void close() {
    jdbc.close();
    dataSource.close();
  }

  private static Workflow<String, String> greeter(String name) {
    return Workflow.define(name, String.class, String.class)
        .run(
            (ctx, who) -> {
              String a = ctx.step().run("hello", String.class, () -> "hello " + who);
              ctx.step().sleep("pause", Duration.ofMillis(10));
              return ctx.step().run("shout", String.class, () -> a.toUpperCase());
            });
  }

  @Test
  void aRunStartedOverRestIsServedByAJdbcWorker() {
    server.serve(greeter("rest-to-jdbc"), WorkerOptions.dataSource(dataSource));
    long runId = server.client().start("rest-to-jdbc", "ada").runId();
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("rest-to-jdbc", runId, String.class, Duration.ofSeconds(30)))
        .isEqualTo("HELLO ADA");
    assertThat(server.client().runs().steps("rest-to-jdbc", runId))
        .extracting(StepInfo::name)
        .containsExactly("hello", "pause", "shout");
  }

  @Test
  void aRunStartedOverJdbcIsServedByAnHttpWorker() {
    server.serve(greeter("jdbc-to-rest"));
    Started s = jdbc.start("jdbc-to-rest", "bob");
    assertThat(s.created()).isTrue();
    assertThat(
            jdbc.runs()
                .awaitResult("jdbc-to-rest", s.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("HELLO BOB");
    assertThat(server.client().runs().get("jdbc-to-rest", s.runId()).status())
        .isEqualTo(RunStatus.COMPLETED);
  }

  @Test
  void workersOfBothKindsShareOneWorkflowsRuns() {
    Workflow<Integer, Integer> slow =
        Workflow.define("shared", Integer.class, Integer.class)
            .run(
                (ctx, n) ->
                    ctx.step()
                        .run(
                            "work",
                            Integer.class,
                            () -> {
                              Thread.sleep(50);
                              return n * 2;
                            }));
    Worker overHttp =
        server.serve(
            slow, WorkerOptions.url(server.url()).concurrency(2).pollWait(Duration.ofSeconds(1)));
    Worker overJdbc = server.serve(slow, WorkerOptions.dataSource(dataSource).concurrency(2));
    List<Long> runs = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      runs.add(jdbc.start("shared", i).runId());
    }
    for (int i = 0; i < runs.size(); i++) {
      assertThat(
              jdbc.runs().awaitResult("shared", runs.get(i), Integer.class, Duration.ofSeconds(60)))
          .isEqualTo(i * 2);
    }
    assertThat(overHttp.metrics().tasks()).isPositive();
    assertThat(overJdbc.metrics().tasks()).isPositive();
  }

  @Test
  void theServerListsJdbcWorkers() {
    server.serve(greeter("listed"), WorkerOptions.dataSource(dataSource).concurrency(3));
    Awaitility.await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> server.client().workers("listed").size() == 1);
    assertThat(server.client().workers("listed").get(0).slots()).isEqualTo(3);
  }

  @Test
  void aBadStartOverJdbcIsRefusedNamingTheFieldAndChangesNothing() throws Exception {
    assertThatThrownBy(
            () -> jdbc.start("refused", "x", StartOptions.builder().retentionDays(40_000).build()))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("retentionDays")
        .satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(400));
    assertThatThrownBy(() -> jdbc.signal("refused", 1, "__child.1", "x"))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("event");
    try (Connection c = server.database().connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'refused'")) {
      rs.next();
      assertThat(rs.getInt(1)).isZero();
    }
  }

  @Test
  void aJdbcWorkerWhoseConnectionsAreCutMidStepLosesNothing() throws Exception {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(server.database().jdbcUrl());
    c.setUsername(server.database().user());
    c.setPassword(server.database().password());
    c.setMaximumPoolSize(4);
    c.addDataSourceProperty("ApplicationName", "cut-worker");
    java.util.concurrent.CountDownLatch inStep = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger runs =
        new java.util.concurrent.atomic.AtomicInteger();
    Workflow<String, String> wf =
        Workflow.define("cut", String.class, String.class)
            .run(
                (ctx, in) -> {
                  String a = ctx.step().run("first", String.class, () -> in + "1");
                  String b =
                      ctx.step()
                          .run(
                              "held",
                              String.class,
                              () -> {
                                runs.incrementAndGet();
                                inStep.countDown();
                                release.await(30, TimeUnit.SECONDS);
                                return a + "2";
                              });
                  return ctx.step().run("last", String.class, () -> b + "3");
                });
    try (HikariDataSource cut = new HikariDataSource(c)) {
      Worker worker = server.serve(wf, WorkerOptions.dataSource(cut).lease(Duration.ofSeconds(5)));
      long runId = server.client().start("cut", "x").runId();
      assertThat(inStep.await(30, TimeUnit.SECONDS)).isTrue();
      // Every session of the worker's pool ends mid-step: its LISTEN, its lead, its idle ones.
      try (Connection admin = server.database().connect();
          Statement s = admin.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                      + " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                      + " AND (application_name = 'cut-worker'"
                      + " OR application_name LIKE 'pgworkflows-l%')")) {
        rs.next();
        assertThat(rs.getInt(1)).isPositive();
      }
      release.countDown();
      assertThat(
              server
                  .client()
                  .runs()
                  .awaitResult("cut", runId, String.class, Duration.ofSeconds(60)))
          .isEqualTo("x123");
      assertThat(server.client().runs().steps("cut", runId))
          .extracting(StepInfo::name)
          .containsExactly("first", "held", "last");
      assertThat(runs.get()).as("the held step ran once").isEqualTo(1);
      worker.close();
    }
  }

  @Test
  void callsOnlyAServerAnswersSaySoOverJdbc() {
    assertThatThrownBy(() -> jdbc.runs().list("x", null, null, 10))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("server");
  }
}
