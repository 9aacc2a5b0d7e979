package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * The retention ceiling of a start that names none (a start through SQL): the one servers stored in
 * queue.setting, else 365; a ceiling passed explicitly (a server's own start) wins.
 */
class RetentionCeilingTest {

  private static String retention(Connection c, String days, String ceiling) throws SQLException {
    String run =
        query(
            c,
            "SELECT run_id FROM queue.workflow_start('ceiling', 'null'::jsonb, p_retention_days => "
                + days
                + (ceiling == null ? "" : ", p_max_retention_days => " + ceiling)
                + ")");
    return query(c, "SELECT retention_days FROM queue.workflow_run WHERE run_id = " + run);
  }

  @Test
  void aStartNamingNoCeilingTakesTheStoredOneElse365AndAnExplicitOneWins() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      assertThat(retention(c, "400", null)).isEqualTo("365");
      exec(c, "SELECT queue.setting_put('max_retention_days', '90')");
      assertThat(retention(c, "400", null)).isEqualTo("90");
      assertThat(retention(c, "40", null)).isEqualTo("40");
      assertThat(retention(c, "400", "200")).isEqualTo("200");
      // The last writer wins.
      exec(c, "SELECT queue.setting_put('max_retention_days', '120')");
      assertThat(retention(c, "400", null)).isEqualTo("120");
    }
  }

  @Test
  void storingTheSameValueAgainWritesNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.setting_put('max_retention_days', '90')");
      String xmin = query(c, "SELECT xmin FROM queue.setting WHERE name = 'max_retention_days'");
      exec(c, "SELECT queue.setting_put('max_retention_days', '90')");
      assertThat(query(c, "SELECT xmin FROM queue.setting WHERE name = 'max_retention_days'"))
          .isEqualTo(xmin);
    }
  }
}
