package dev.pgworkflows.engine.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The naming rules both ends check before any I/O ({@link Names}) are the rules the SQL functions
 * check again ({@code sql/functions/common.sql}): for names at and past each bound, of each kind of
 * character, the Java check and the SQL check agree.
 */
class NamesMatchTheFunctionsTest {
  private static final List<String> SAMPLES =
      List.of(
          "a",
          "run",
          "sleep",
          "wait",
          "child",
          "Run",
          "runs",
          "orders",
          "onboard-user_2",
          "_x",
          "-x",
          "Orders",
          "a.b",
          "a:b",
          "a b",
          "é",
          "..",
          "x".repeat(43),
          "x".repeat(44),
          "x".repeat(48),
          "x".repeat(49),
          "x".repeat(128),
          "x".repeat(129),
          "");

  private static TestDatabase db;

  @BeforeAll
  static void migrate() {
    db = TestDatabase.fresh();
  }

  @Test
  void stepNames() throws SQLException {
    agree("check_step_name", Names::isStepName);
  }

  @Test
  void stepKinds() throws SQLException {
    agree("check_step_kind", Names::isStepKind);
  }

  @Test
  void workflowNames() throws SQLException {
    agree("check_workflow_name", Names::isWorkflowName);
  }

  @Test
  void queueNames() throws SQLException {
    agree("check_queue_name", Names::isQueueName);
  }

  private static void agree(String function, Predicate<String> java) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement("SELECT queue." + function + "(?)")) {
      for (String name : SAMPLES) {
        boolean sql;
        ps.setString(1, name);
        try {
          ps.execute();
          sql = true;
        } catch (SQLException e) {
          assertThat(e.getSQLState()).as("%s(%s)", function, name).isEqualTo("22023");
          sql = false;
        }
        assertThat(sql).as("%s(\"%s\") against Java", function, name).isEqualTo(java.test(name));
      }
    }
  }
}
