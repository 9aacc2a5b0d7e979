package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLWarning;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * The sweeper's statements find what they delete by index, whatever the size of the run table: the
 * runs due by a range of the expiry index that stops at the first run not yet due (not a filter
 * over every ended run), and the rows to delete by their keys (not a scan of the table). Checked on
 * the plans PostgreSQL runs inside the function ({@code auto_explain}, nested statements, sent to
 * this session), with sequential scans priced out so that only a plan that cannot use an index
 * shows one.
 */
class SweepFindsRunsByIndexTest {
  private static final int RUNS = 20_000;
  private static final int EXPIRED = 500;

  @Test
  void aSweepDeletesByKeyAndAnIdlePassStopsAtTheFirstRunNotDue() throws Exception {
    try (Connection c = TestDatabase.fresh().connect()) {
      // Ended runs, the oldest EXPIRED of them past their 30 days, three journal rows each.
      exec(
          c,
          "INSERT INTO queue.workflow_run (workflow_name, workflow_version, status, output,"
              + " retention_days, started_at, completed_at)"
              + " SELECT 'sweep-scale', 1, 'completed', '1', 30, t, t"
              + " FROM (SELECT now() - make_interval(days => CASE WHEN i <= "
              + EXPIRED
              + " THEN 40 ELSE 1 END, secs => "
              + RUNS
              + " - i) AS t FROM generate_series(1, "
              + RUNS
              + ") i) x");
      exec(
          c,
          "INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, output, started_at)"
              + " SELECT r.run_id, s.name, s.seq, 'run', '1', r.started_at"
              + " FROM queue.workflow_run r,"
              + " (VALUES ('a', 1), ('b', 2), ('c', 3)) s(name, seq)");
      exec(c, "ANALYZE queue.workflow_run");
      exec(c, "ANALYZE queue.workflow_step");
      assertThat(
              query(
                  c,
                  "SELECT count(*) FROM queue.workflow_run"
                      + " WHERE expires_at = completed_at + interval '30 days'"))
          .as("every ended run has its expiry")
          .isEqualTo(Integer.toString(RUNS));

      exec(c, "LOAD 'auto_explain'");
      exec(c, "SET auto_explain.log_min_duration = 0");
      exec(c, "SET auto_explain.log_nested_statements = on");
      exec(c, "SET auto_explain.log_level = notice");
      exec(c, "SET client_min_messages = notice");
      exec(c, "SET enable_seqscan = off");

      String[] sweep = sweep(c);
      assertThat(sweep[0]).isEqualTo(Integer.toString(EXPIRED));
      assertThat(sweep[1])
          .doesNotContain("Seq Scan on workflow_run")
          .doesNotContain("Seq Scan on workflow_step")
          .contains("workflow_run_expiry_idx");

      String[] idle = sweep(c);
      assertThat(idle[0]).isEqualTo("0");
      assertThat(idle[1])
          .doesNotContain("Seq Scan on workflow_run")
          .containsPattern("Index Cond: \\(expires_at < ");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step"))
          .isEqualTo(Integer.toString((RUNS - EXPIRED) * 3));
    }
  }

  /** One sweep: how many runs it deleted, and the plans of the statements it ran. */
  private static String[] sweep(Connection c) throws Exception {
    try (Statement s = c.createStatement()) {
      s.execute("SELECT queue.sweep_workflow_runs(1000)");
      StringBuilder plans = new StringBuilder();
      for (SQLWarning w = s.getWarnings(); w != null; w = w.getNextWarning()) {
        plans.append(w.getMessage()).append('\n');
      }
      try (var rs = s.getResultSet()) {
        rs.next();
        return new String[] {rs.getString(1), plans.toString()};
      }
    }
  }
}
