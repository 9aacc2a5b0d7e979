package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A worker keeps the journals of the runs it serves and receives only the rows written since it
 * last held a run (over JDBC and over HTTP alike); a run restarted from an earlier step sends its
 * whole journal again, so the replay never sees a row the run set aside.
 */
class WorkersKeepJournalsTest {
  private static final int ITERATIONS = 40;

  @RegisterExtension static final LiveServer server = new LiveServer();

  /** A database connection, for what no client call does. */
  interface Sql {
    Connection connect() throws SQLException;
  }

  @Test
  void aJdbcWorkersLongRunResumedAndRestartedReplaysItsJournalAsTheDatabaseHoldsIt()
      throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (HikariDataSource ds = WithoutAServerTest.pool(db);
        PgWorkflows pgw = PgWorkflows.builder(ds).migrate(false).start()) {
      longRunRestarted("counting-jdbc", pgw::serve, pgw.client(), ds::getConnection);
    }
  }

  @Test
  void anHttpWorkersLongRunResumedAndRestartedReplaysItsJournalAsTheDatabaseHoldsIt()
      throws Exception {
    longRunRestarted(
        "counting-http", wf -> server.serve(wf), server.client(), server.database()::connect);
  }

  /**
   * A run of {@value #ITERATIONS} iterations of (a step, a 1 ms sleep) fails at its end, is
   * restarted from step s10, and ends with the sum of its steps' outputs as journaled.
   */
  private static void longRunRestarted(
      String name, Consumer<Workflow<String, Integer>> serve, WorkflowClient client, Sql sql)
      throws Exception {
    AtomicInteger executions = new AtomicInteger();
    AtomicBoolean failAtTheEnd = new AtomicBoolean(true);
    Workflow<String, Integer> counting =
        Workflow.define(name, String.class, Integer.class)
            .run(
                (ctx, in) -> {
                  int sum = 0;
                  for (int i = 0; i < ITERATIONS; i++) {
                    sum += ctx.step().run("s" + i, Integer.class, executions::incrementAndGet);
                    ctx.step().sleep("z" + i, Duration.ofMillis(1));
                  }
                  if (failAtTheEnd.get()) {
                    throw new IllegalStateException("fails once at the end");
                  }
                  return sum;
                });
    serve.accept(counting);
    long runId = client.start(name, "x").runId();
    Awaitility.await()
        .atMost(60, TimeUnit.SECONDS)
        .until(() -> client.runs().get(name, runId).status() == RunStatus.FAILED);
    assertThat(executions.get()).isEqualTo(ITERATIONS);

    // From step s10 on the journal is set aside; the worker still holds all of it.
    failAtTheEnd.set(false);
    try (Connection c = sql.connect();
        Statement s = c.createStatement()) {
      s.execute("SELECT queue.workflow_restart(" + runId + ", 's10')");
    }
    int result = client.runs().awaitResult(name, runId, Integer.class, Duration.ofSeconds(60));

    assertThat(executions.get()).isEqualTo(2 * ITERATIONS - 10);
    // Steps s0..s9 kept their first outputs, s10.. ran again with the next ones.
    int expected = 0;
    for (int i = 1; i <= 10; i++) {
      expected += i;
    }
    for (int i = ITERATIONS + 1; i <= 2 * ITERATIONS - 10; i++) {
      expected += i;
    }
    assertThat(result).isEqualTo(expected).isEqualTo(journaledSum(sql, runId));
  }

  private static int journaledSum(Sql sql, long runId) throws Exception {
    try (Connection c = sql.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT sum(output::int) FROM queue.workflow_step WHERE run_id = "
                    + runId
                    + " AND step_name ~ '^s[0-9]+$'")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
