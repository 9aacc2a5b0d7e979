package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A JDBC worker keeps the journals of the runs it serves and receives only the rows written since
 * it last held a run; a run restarted from an earlier step sends its whole journal again, so the
 * replay never sees a row the run set aside.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class JdbcWorkerKeepsJournalsTest {
  private static final int ITERATIONS = 40;

  @Test
  void aLongRunResumedManyTimesAndRestartedReplaysItsJournalAsTheDatabaseHoldsIt()
      throws Exception {
    AtomicInteger executions = new AtomicInteger();
    AtomicBoolean failAtTheEnd = new AtomicBoolean(true);
    Workflow<String, Integer> counting =
        Workflow.define("counting", String.class, Integer.class)
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
    TestDatabase db = TestDatabase.fresh();
    try (HikariDataSource ds = WithoutAServerTest.pool(db);
        PgWorkflows pgw = PgWorkflows.builder(ds).migrate(false).start()) {
      pgw.serve(counting);
      long runId = pgw.client().start("counting", "x").runId();
      Awaitility.await()
          .atMost(60, TimeUnit.SECONDS)
          .until(() -> pgw.client().get("counting", runId).status() == RunStatus.FAILED);
      assertThat(executions.get()).isEqualTo(ITERATIONS);

      // From step s10 on the journal is set aside; the worker still holds all of it.
      failAtTheEnd.set(false);
      try (Connection c = ds.getConnection();
          Statement s = c.createStatement()) {
        s.execute("SELECT queue.workflow_restart(" + runId + ", 's10')");
      }
      int result =
          pgw.client().awaitResult("counting", runId, Integer.class, Duration.ofSeconds(60));

      assertThat(executions.get()).isEqualTo(2 * ITERATIONS - 10);
      // Steps s0..s9 kept their first outputs, s10.. ran again with the next ones.
      int expected = 0;
      for (int i = 1; i <= 10; i++) {
        expected += i;
      }
      for (int i = ITERATIONS + 1; i <= 2 * ITERATIONS - 10; i++) {
        expected += i;
      }
      assertThat(result).isEqualTo(expected).isEqualTo(journaledSum(ds, runId));
    }
  }

  private static int journaledSum(HikariDataSource ds, long runId) throws Exception {
    try (Connection c = ds.getConnection();
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
