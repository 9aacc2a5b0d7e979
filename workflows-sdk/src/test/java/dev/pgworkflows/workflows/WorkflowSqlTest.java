package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.server.QueueServer;
import dev.pgworkflows.server.ServerConfig;
import dev.pgworkflows.testing.Notifications;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.testing.LiveServer;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Starts and signals through the caller's own connection and transaction ({@link WorkflowSql}). */
class WorkflowSqlTest {
  /** A ceiling below the default 365, which a start through SQL must apply as the server does. */
  private static final int CEILING = 90;

  @RegisterExtension
  static final LiveServer server =
      LiveServer.with("WORKFLOWS_MAX_RETENTION_DAYS", Integer.toString(CEILING));

  record Order(String id, int amount) {}

  @Test
  void aStartCommittedWithTheCallersRowIsRunOnceByAWorker() throws Exception {
    AtomicInteger bodies = new AtomicInteger();
    AtomicInteger steps = new AtomicInteger();
    Workflow<Order, Integer> wf =
        Workflow.define("sql-commit", Order.class, Integer.class)
            .run(
                (ctx, in) -> {
                  bodies.incrementAndGet();
                  return ctx.step()
                      .run(
                          "double",
                          Integer.class,
                          () -> {
                            steps.incrementAndGet();
                            return in.amount() * 2;
                          });
                });
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
            server
                .client()
                .runs()
                .awaitResult("sql-commit", runId, Integer.class, Duration.ofSeconds(30)))
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
    // Once: the step's work, and the body, which had no reason to run again after it.
    assertThat(steps.get()).isEqualTo(1);
    assertThat(bodies.get()).isEqualTo(1);
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

      long rolledBack = WorkflowSql.start(c, "sql-rollback", "second").runId();
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
    StartOptions key = StartOptions.builder().idempotencyKey("order-7").priority(3).build();
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
    StartOptions key = StartOptions.builder().idempotencyKey("order-8").build();
    ExecutorService other = Executors.newSingleThreadExecutor();
    try (Connection a = server.database().connect();
        Connection b = server.database().connect()) {
      a.setAutoCommit(false);
      Started first = WorkflowSql.start(a, "sql-idem-race", "a", key);
      long bPid = count(b, "SELECT pg_backend_pid()");
      Future<Started> second = other.submit(() -> WorkflowSql.start(b, "sql-idem-race", "b", key));
      // The second waits on the first's key (a lock not granted) until the first transaction ends.
      try (Connection watch = server.database().connect()) {
        Awaitility.await()
            .atMost(10, TimeUnit.SECONDS)
            .until(
                () ->
                    count(
                            watch,
                            "SELECT count(*) FROM pg_locks WHERE NOT granted AND pid = " + bPid)
                        > 0);
      }
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
    Workflow<Integer, Integer> defined =
        Workflow.define("sql-options-def", Integer.class, Integer.class)
            .retention(Duration.ofDays(400))
            .deadline(Duration.ofMinutes(20))
            .run((ctx, in) -> in);
    List<StartOptions> cases =
        List.of(
            StartOptions.builder()
                .delay(Duration.ofMinutes(3))
                .deadline(Duration.ofMinutes(10))
                .concurrencyKey("customer-42")
                .priority(4)
                .version(3)
                .retentionDays(7)
                .build(),
            StartOptions.builder().startAt(at).deadlineAt(at.plus(Duration.ofHours(1))).build(),
            // Above the server's ceiling: capped, not refused.
            StartOptions.builder().retentionDays(400).build());
    try (Connection c = server.database().connect()) {
      for (StartOptions o : cases) {
        RunInfo rest =
            server
                .client()
                .runs()
                .get("sql-options", server.client().start("sql-options", 5, o).runId());
        RunInfo sql =
            server
                .client()
                .runs()
                .get("sql-options", WorkflowSql.start(c, "sql-options", 5, o).runId());
        assertThat(applied(sql)).as("options %s", o).isEqualTo(applied(rest));
        sameTiming(sql, rest, o);
      }
      // A definition's retention above the ceiling is capped, and its deadline applies.
      RunInfo rest =
          server.client().runs().get(defined.name(), server.client().start(defined, 1).runId());
      RunInfo sql =
          server
              .client()
              .runs()
              .get(defined.name(), WorkflowSql.start(c, defined, 1, null).runId());
      assertThat(applied(sql)).isEqualTo(applied(rest));
      sameTiming(sql, rest, StartOptions.builder().build());
      assertThat(sql.retentionDays()).isEqualTo(CEILING);
      assertThat(Duration.between(sql.startedAt(), sql.deadlineAt()))
          .isBetween(Duration.ofMinutes(20).minusSeconds(5), Duration.ofMinutes(20).plusSeconds(5));

      Started first =
          WorkflowSql.start(
              c,
              "sql-options",
              1,
              StartOptions.builder().debounce("d", Duration.ofMinutes(1)).build());
      Started folded =
          WorkflowSql.start(
              c,
              "sql-options",
              2,
              StartOptions.builder().debounce("d", Duration.ofMinutes(1)).build());
      assertThat(first.debounced()).isFalse();
      assertThat(folded.debounced()).isTrue();
      assertThat(folded.runId()).isEqualTo(first.runId());
      assertThat(server.client().runs().get("sql-options", first.runId()).input().asInt())
          .isEqualTo(2);
    }
  }

  /** What a start's options made of a run, but for its timing (see {@link #sameTiming}). */
  private static List<Object> applied(RunInfo r) {
    return Arrays.asList(
        r.version(),
        r.retentionDays(),
        r.concurrencyKey(),
        r.priority(),
        r.input(),
        r.status(),
        r.dueAt() == null,
        r.deadlineAt() == null);
  }

  /**
   * Two runs started a few milliseconds apart with the same options are due, and reach their
   * deadline, at the same offsets from their starts, or at the same instants, within a second.
   */
  private static void sameTiming(RunInfo sql, RunInfo rest, StartOptions o) {
    Duration apart = Duration.between(rest.startedAt(), sql.startedAt());
    if (sql.dueAt() != null) {
      Duration d = Duration.between(rest.dueAt(), sql.dueAt());
      assertThat(o.startAt() != null ? d : d.minus(apart))
          .as("dueAt, %s", o)
          .isLessThan(Duration.ofSeconds(1))
          .isGreaterThan(Duration.ofSeconds(-1));
    }
    if (sql.deadlineAt() != null) {
      Duration d = Duration.between(rest.deadlineAt(), sql.deadlineAt());
      assertThat(o.deadlineAt() != null || o.startAt() != null ? d : d.minus(apart))
          .as("deadlineAt, %s", o)
          .isLessThan(Duration.ofSeconds(1))
          .isGreaterThan(Duration.ofSeconds(-1));
    }
  }

  @Test
  void aRefusedCallLeavesTheCallersTransactionAndItsEarlierWorkIntact() throws Exception {
    try (Connection c = server.database().connect()) {
      exec(c, "CREATE TABLE sql_audit (note text)");
      c.setAutoCommit(false);
      exec(c, "INSERT INTO sql_audit VALUES ('before')");
      // A deadline before the run is due: only the database judges it.
      assertThatThrownBy(
              () ->
                  WorkflowSql.start(
                      c,
                      "sql-refused",
                      "x",
                      StartOptions.builder()
                          .deadlineAt(Instant.now().minus(Duration.ofHours(1)))
                          .build()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("deadlineAt")
          .hasCauseInstanceOf(SQLException.class);
      long runId = WorkflowSql.start(c, "sql-refused", "y", null).runId();
      exec(c, "INSERT INTO sql_audit VALUES ('after')");
      c.commit();
      c.setAutoCommit(true);
      assertThat(count(c, "SELECT count(*) FROM sql_audit")).isEqualTo(2);
      assertThat(
              count(
                  c, "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'sql-refused'"))
          .isEqualTo(1);
      assertThat(server.client().runs().get("sql-refused", runId).input().asText()).isEqualTo("y");
    }
  }

  @Test
  void aDebouncedStartOutsideReadCommittedIsRefusedAndOthersAreNot() throws Exception {
    try (Connection c = server.database().connect()) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      assertThatThrownBy(
              () ->
                  WorkflowSql.start(
                      c,
                      "sql-iso",
                      1,
                      StartOptions.builder().debounce("k", Duration.ofMinutes(1)).build()))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("READ COMMITTED")
          .hasMessageContaining("REPEATABLE READ");
      // The transaction goes on, and a start without debounce works in it.
      long runId = WorkflowSql.start(c, "sql-iso", 2, null).runId();
      c.commit();
      assertThat(server.client().runs().get("sql-iso", runId).input().asInt()).isEqualTo(2);
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      assertThat(
              WorkflowSql.start(
                      c,
                      "sql-iso",
                      3,
                      StartOptions.builder().debounce("k", Duration.ofMinutes(1)).build())
                  .created())
          .isTrue();
      c.commit();
    }
  }

  @Test
  void aStartInsideASpanMakesTheRunSpanAChildOfIt() throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    OpenTelemetrySdk otel =
        OpenTelemetrySdk.builder()
            .setTracerProvider(
                SdkTracerProvider.builder()
                    .setIdGenerator(dev.pgworkflows.server.internal.telemetry.Tracing.ID_GENERATOR)
                    .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                    .build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();
    TestDatabase db = TestDatabase.fresh();
    Workflow<String, String> wf =
        Workflow.define("sql-traced", String.class, String.class)
            .run((ctx, in) -> ctx.step().run("shout", String.class, in::toUpperCase));
    try (QueueServer qs =
            QueueServer.start(
                ServerConfig.from(Map.of("WORKFLOWS_PORT", "0"))
                    .withDatabase(db.jdbcUrl(), db.user(), db.password()),
                otel);
        Connection c = db.connect()) {
      Span caller = otel.getTracer("test").spanBuilder("signup").startSpan();
      Worker worker =
          wf.serve(
              WorkerOptions.url("http://localhost:" + qs.port())
                  .pollWait(Duration.ofSeconds(1))
                  .openTelemetry(otel));
      try {
        long runId;
        Scope scope = caller.makeCurrent();
        try {
          runId = WorkflowSql.start(c, wf, "ada", null).runId();
        } finally {
          scope.close();
          caller.end();
        }
        // Outside a span: no trace identity, as a start through the route without one.
        long untraced = WorkflowSql.start(c, wf, "bob", null).runId();
        WorkflowClient client = WorkflowClient.connect("http://localhost:" + qs.port());
        assertThat(
                client.runs().awaitResult(wf.name(), runId, String.class, Duration.ofSeconds(30)))
            .isEqualTo("ADA");
        assertThat(
                count(
                    c,
                    "SELECT count(*) FROM queue.workflow_run WHERE trace_context IS NULL AND run_id = "
                        + untraced))
            .isEqualTo(1);
        Awaitility.await()
            .atMost(10, TimeUnit.SECONDS)
            .until(
                () ->
                    exporter.getFinishedSpanItems().stream()
                        .anyMatch(
                            s ->
                                s.getName().equals("workflow.run")
                                    && s.getTraceId()
                                        .equals(caller.getSpanContext().getTraceId())));
        SpanData run =
            exporter.getFinishedSpanItems().stream()
                .filter(
                    s ->
                        s.getName().equals("workflow.run")
                            && s.getTraceId().equals(caller.getSpanContext().getTraceId()))
                .findFirst()
                .orElseThrow();
        assertThat(run.getParentSpanId()).isEqualTo(caller.getSpanContext().getSpanId());
        assertThat(exporter.getFinishedSpanItems())
            .as("the worker's step span is a child of the run span")
            .anyMatch(
                s ->
                    s.getName().equals("workflow.step")
                        && s.getParentSpanId().equals(run.getSpanId())
                        && s.getTraceId().equals(run.getTraceId()));
      } finally {
        worker.close();
      }
    } finally {
      otel.close();
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
      assertThat(server.client().runs().signals("sql-signal", runId)).isEmpty();
      assertThat(server.client().runs().get("sql-signal", runId).status())
          .isEqualTo(RunStatus.RUNNING);
      // Another workflow's name for the running run: 404, and nothing is stored.
      assertThatThrownBy(() -> WorkflowSql.signal(c, "sql-other", runId, "paid", null))
          .isInstanceOf(ApiException.class)
          .hasMessageContaining("workflow sql-other has no run " + runId)
          .satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(404));
      c.commit();
      assertThat(server.client().runs().signals("sql-signal", runId)).isEmpty();

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
                  .runs()
                  .awaitResult("sql-signal", runId, Integer.class, Duration.ofSeconds(30)))
          .isEqualTo(7);
      assertThat(server.client().runs().signals("sql-signal", runId)).hasSize(1);

      // The run has ended: refused as the route refuses it, and nothing stored.
      assertThatThrownBy(() -> WorkflowSql.signal(c, "sql-signal", runId, "paid", null))
          .isInstanceOf(ApiException.class)
          .hasMessage("run " + runId + " has ended: completed")
          .satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(409));
      c.commit();
      assertThat(server.client().runs().signals("sql-signal", runId)).hasSize(1);
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
              () ->
                  WorkflowSql.start(
                      c, "sql-bad", "x", StartOptions.builder().retentionDays(40000).build()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("retentionDays");
      assertThatThrownBy(
              () ->
                  WorkflowSql.start(
                      c, "sql-bad", "x", StartOptions.builder().version(2_000_000).build()))
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
      // IllegalArgumentException naming it.
      c.setAutoCommit(false);
      assertThatThrownBy(
              () ->
                  WorkflowSql.start(
                      c,
                      "sql-bad",
                      "x",
                      StartOptions.builder()
                          .deadlineAt(Instant.now().minus(Duration.ofHours(1)))
                          .build()))
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
