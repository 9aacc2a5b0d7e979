package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.Migrations;
import dev.pgworkflows.testing.Notifications;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.internal.sql.SchemaVersion;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Starts and signals through the caller's own connection and transaction ({@link WorkflowSql}). */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class WorkflowSqlTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  record Order(String id, int amount) {}

  @Test
  void aStartCommittedWithTheCallersRowIsRunOnceByAWorker() throws Exception {
    Workflow<Order, Integer> wf =
        Workflow.define("sql-commit", Order.class, Integer.class)
            .run((ctx, in) -> ctx.step().run("double", Integer.class, () -> in.amount() * 2));
    server.serve(wf);
    long runId;
    try (Connection c = server.database().connect();
        Connection other = server.database().connect()) {
      exec(c, "CREATE TABLE orders_commit (id text PRIMARY KEY, run_id bigint)");
      c.setAutoCommit(false);
      Started s = WorkflowSql.start(c, wf, new Order("o-1", 21), null);
      runId = s.runId();
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO orders_commit VALUES (?, ?)")) {
        ps.setString(1, "o-1");
        ps.setLong(2, runId);
        ps.executeUpdate();
      }
      assertThat(s.created()).isTrue();
      assertThat(s.status()).isEqualTo(RunStatus.RUNNING);
      // Not there for anyone else until the commit.
      assertThat(count(other, "SELECT count(*) FROM queue.workflow_run WHERE run_id = " + runId))
          .isZero();
      c.commit();
    }
    assertThat(
            server.client().awaitResult("sql-commit", runId, Integer.class, Duration.ofSeconds(30)))
        .isEqualTo(42);
    try (Connection c = server.database().connect()) {
      assertThat(
              count(
                  c,
                  "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'sql-commit'"
                      + " AND status = 'completed' AND input = '{\"id\": \"o-1\", \"amount\": 21}'"))
          .isEqualTo(1);
      assertThat(count(c, "SELECT run_id FROM orders_commit")).isEqualTo(runId);
    }
  }

  @Test
  void aRolledBackStartLeavesNoRunNoMessageAndNoWakeup() throws Exception {
    try (Connection listener = server.database().connect();
        Connection c = server.database().connect()) {
      Notifications heard = Notifications.listen(listener);
      c.setAutoCommit(false);
      long committed = WorkflowSql.start(c, "sql-rollback", "first", null).runId();
      c.commit();
      assertThat(heard.heard()).contains("__wf_sql-rollback");

      long rolledBack = WorkflowSql.start(c, "sql-rollback", "second", StartOptions.NONE).runId();
      c.rollback();
      assertThat(heard.heard()).doesNotContain("__wf_sql-rollback");
      assertThat(rolledBack).isNotEqualTo(committed);
      assertThat(
              count(
                  c,
                  "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'sql-rollback'"))
          .isEqualTo(1);
      assertThat(count(c, "SELECT depth FROM queue.queue_metrics('__wf_sql-rollback')"))
          .isEqualTo(1);
      c.commit();
    }
  }

  @Test
  void anIdempotencyKeyAnswersTheSameRunWithinATransactionAndAcrossTwo() throws Exception {
    StartOptions key = StartOptions.idempotencyKey("order-7").withPriority(3);
    try (Connection c = server.database().connect()) {
      c.setAutoCommit(false);
      Started first = WorkflowSql.start(c, "sql-idem", "a", key);
      Started again = WorkflowSql.start(c, "sql-idem", "b", key);
      c.commit();
      Started later = WorkflowSql.start(c, "sql-idem", "c", key);
      c.commit();
      assertThat(first.created()).isTrue();
      assertThat(again.created()).isFalse();
      assertThat(again.runId()).isEqualTo(first.runId());
      assertThat(later.created()).isFalse();
      assertThat(later.runId()).isEqualTo(first.runId());
      assertThat(
              count(c, "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'sql-idem'"))
          .isEqualTo(1);
      c.commit();
    }
  }

  @Test
  void aKeyStartedInAnOpenTransactionIsAnsweredToAnotherOnceItCommits() throws Exception {
    StartOptions key = StartOptions.idempotencyKey("order-8");
    ExecutorService other = Executors.newSingleThreadExecutor();
    try (Connection a = server.database().connect();
        Connection b = server.database().connect()) {
      a.setAutoCommit(false);
      Started first = WorkflowSql.start(a, "sql-idem-race", "a", key);
      Future<Started> second = other.submit(() -> WorkflowSql.start(b, "sql-idem-race", "b", key));
      Thread.sleep(300);
      // The second waits on the first's key until the first transaction ends.
      assertThat(second.isDone()).isFalse();
      a.commit();
      Started answered = second.get(10, TimeUnit.SECONDS);
      assertThat(answered.created()).isFalse();
      assertThat(answered.runId()).isEqualTo(first.runId());
    } finally {
      other.shutdownNow();
    }
  }

  @Test
  void startOptionsApplyAsARestStartAppliesThem() throws Exception {
    Instant at = Instant.now().plus(Duration.ofMinutes(5));
    try (Connection c = server.database().connect()) {
      Started delayed =
          WorkflowSql.start(
              c,
              "sql-options",
              null,
              StartOptions.startAt(at)
                  .withDeadline(Duration.ofMinutes(10))
                  .withConcurrencyKey("customer-42")
                  .withPriority(4)
                  .withVersion(3)
                  .withRetentionDays(7));
      RunInfo run = server.client().get("sql-options", delayed.runId());
      assertThat(run.version()).isEqualTo(3);
      assertThat(run.retentionDays()).isEqualTo(7);
      assertThat(run.concurrencyKey()).isEqualTo("customer-42");
      assertThat(run.priority()).isEqualTo(4);
      assertThat(run.input().isNull()).isTrue();
      assertThat(Duration.between(at, run.dueAt()).abs()).isLessThan(Duration.ofMillis(2));
      assertThat(run.deadlineAt()).isEqualTo(run.dueAt().plus(Duration.ofMinutes(10)));
      Started first =
          WorkflowSql.start(c, "sql-options", 1, StartOptions.debounce("d", Duration.ofMinutes(1)));
      Started folded =
          WorkflowSql.start(c, "sql-options", 2, StartOptions.debounce("d", Duration.ofMinutes(1)));
      assertThat(first.debounced()).isFalse();
      assertThat(folded.debounced()).isTrue();
      assertThat(folded.runId()).isEqualTo(first.runId());
      assertThat(server.client().get("sql-options", first.runId()).input().asInt()).isEqualTo(2);
    }
  }

  @Test
  void aSignalRolledBackIsNotDeliveredAndACommittedOneIs() throws Exception {
    Workflow<String, Integer> wf =
        Workflow.define("sql-signal", String.class, Integer.class)
            .run(
                (ctx, in) ->
                    ctx.step()
                        .waitForEvent("paid", Order.class, Match.of("id", in), Duration.ofHours(1))
                        .map(Order::amount)
                        .orElse(-1));
    server.serve(wf);
    long runId = server.client().start(wf, "o-9").runId();
    try (Connection c = server.database().connect()) {
      c.setAutoCommit(false);
      WorkflowClient.SignalResult lost =
          WorkflowSql.signal(c, "sql-signal", runId, "paid", new Order("o-9", 1), "pay-1");
      assertThat(lost.signalId()).isPositive();
      c.rollback();
      assertThat(server.client().signals("sql-signal", runId)).isEmpty();
      assertThat(server.client().get("sql-signal", runId).status()).isEqualTo(RunStatus.RUNNING);
      // Another workflow's name for the running run: 404, and nothing is stored.
      assertThatThrownBy(() -> WorkflowSql.signal(c, "sql-other", runId, "paid", null))
          .isInstanceOf(ApiException.class)
          .hasMessageContaining("workflow sql-other has no run " + runId)
          .satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(404));
      c.commit();
      assertThat(server.client().signals("sql-signal", runId)).isEmpty();

      WorkflowClient.SignalResult sent =
          WorkflowSql.signal(c, "sql-signal", runId, "paid", new Order("o-9", 7), "pay-1");
      WorkflowClient.SignalResult again =
          WorkflowSql.signal(c, "sql-signal", runId, "paid", new Order("o-9", 7), "pay-1");
      c.commit();
      assertThat(again.duplicate()).isTrue();
      assertThat(again.signalId()).isEqualTo(sent.signalId());
      assertThat(
              server
                  .client()
                  .awaitResult("sql-signal", runId, Integer.class, Duration.ofSeconds(30)))
          .isEqualTo(7);
      assertThat(server.client().signals("sql-signal", runId)).hasSize(1);

      // The run has ended: refused as the route refuses it, and nothing stored.
      assertThatThrownBy(() -> WorkflowSql.signal(c, "sql-signal", runId, "paid", null))
          .isInstanceOf(ApiException.class)
          .satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(409));
      c.commit();
      assertThat(server.client().signals("sql-signal", runId)).hasSize(1);
    }
  }

  @Test
  void aDatabaseWithoutTheSchemaIsNamedAndLeftAsItWas() throws Exception {
    TestDatabase blank = TestDatabase.blank();
    try (Connection c = blank.connect()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> WorkflowSql.start(c, "sql-none", "x", null))
          .isInstanceOf(QueueSchemaException.class)
          .hasMessageContaining("the queue schema is not installed in this database")
          .hasMessageContaining("start a pgworkflows server against it once")
          .satisfies(e -> assertThat(((QueueSchemaException) e).foundVersion()).isZero());
      assertThatThrownBy(() -> WorkflowSql.signal(c, "sql-none", 1, "paid", null))
          .isInstanceOf(QueueSchemaException.class);
      // The caller's transaction is still usable, and nothing was created.
      assertThat(count(c, "SELECT count(*) FROM pg_namespace WHERE nspname = 'queue'")).isZero();
      c.commit();
    }
  }

  @Test
  void aDatabaseAtAnotherSchemaVersionIsNamedWithBothVersions() throws Exception {
    TestDatabase other = TestDatabase.fresh();
    int newer = SchemaVersion.EXPECTED + 1;
    try (Connection c = other.connect()) {
      exec(
          c,
          "INSERT INTO queue.schema_version (version, file_name, checksum)"
              + " VALUES ("
              + newer
              + ", 'V999__future.sql', 'x')");
      c.setAutoCommit(false);
      assertThatThrownBy(() -> WorkflowSql.start(c, "sql-future", "x", null))
          .isInstanceOf(QueueSchemaException.class)
          .hasMessageContaining("version " + newer)
          .hasMessageContaining("built for version " + SchemaVersion.EXPECTED);
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_run")).isZero();
      c.commit();
    }
  }

  @Test
  void theSdkExpectsTheSchemaVersionOfTheMigrationsItShipsWith() throws Exception {
    assertThat(SchemaVersion.EXPECTED).isEqualTo(Migrations.latestVersion());
    try (Connection c = server.database().connect()) {
      assertThat(count(c, "SELECT max(version) FROM queue.schema_version"))
          .isEqualTo(SchemaVersion.EXPECTED);
    }
  }

  @Test
  void badArgumentsAreRefusedByNameAndChangeNothing() throws Exception {
    try (Connection c = server.database().connect()) {
      assertThatThrownBy(() -> WorkflowSql.start(null, "sql-bad", "x", null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("connection must not be null");
      assertThatThrownBy(() -> WorkflowSql.start(c, (String) null, "x", null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("workflow must not be null");
      assertThatThrownBy(() -> WorkflowSql.start(c, (Workflow<String, String>) null, "x", null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("workflow must not be null");
      assertThatThrownBy(() -> WorkflowSql.start(c, "Bad Name", "x", null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("workflow name \"Bad Name\"");
      assertThatThrownBy(
              () -> WorkflowSql.start(c, "sql-bad", "x", StartOptions.NONE.withRetentionDays(400)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("retentionDays");
      assertThatThrownBy(
              () -> WorkflowSql.start(c, "sql-bad", "x", StartOptions.NONE.withVersion(2_000_000)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("version");
      assertThatThrownBy(() -> WorkflowSql.signal(c, "sql-bad", 1, "__child", null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("event names starting with \"__\"");
      assertThatThrownBy(() -> WorkflowSql.signal(c, "sql-bad", 1, "a b", null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("event must be");
      assertThatThrownBy(() -> WorkflowSql.signal(c, "sql-bad", 0, "paid", null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("runId");
      assertThatThrownBy(() -> WorkflowSql.signal(c, "sql-bad", 1, "paid", null, ""))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("idempotencyKey");
      assertThatThrownBy(() -> WorkflowSql.signal(c, "sql-bad", 1, "paid", null, null))
          .isInstanceOf(ApiException.class)
          .satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(404));

      // A field only the database can judge (a deadline before the run is due) comes back as
      // IllegalArgumentException naming it; the transaction is then aborted and rolled back.
      c.setAutoCommit(false);
      assertThatThrownBy(
              () ->
                  WorkflowSql.start(
                      c,
                      "sql-bad",
                      "x",
                      StartOptions.deadlineAt(Instant.now().minus(Duration.ofHours(1)))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("deadlineAt");
      c.rollback();
      assertThat(
              count(c, "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'sql-bad'"))
          .isZero();
      c.commit();
    }
  }

  private static void exec(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static long count(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
