package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static dev.pgworkflows.sql.WorkflowSql.signal;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * A workflow's cancel-on rules: a signal a rule names cancels the run it is sent to, when its
 * payload fits; a message published on a topic a rule's pattern fits cancels the running runs of
 * the workflow whose input has the rule's fields as the payload has them, and no other run. Rules
 * are replaced as a whole, and a bad one changes nothing.
 */
class CancelOnTest {

  private static long start(Connection c, String workflow, String input) throws SQLException {
    return Long.parseLong(
        query(
            c,
            "SELECT run_id FROM queue.workflow_start('"
                + workflow
                + "', '"
                + input
                + "'::jsonb, NULL, NULL)"));
  }

  private static String status(Connection c, long run) throws SQLException {
    return query(c, "SELECT status FROM queue.workflow_run WHERE run_id = " + run);
  }

  private static String rules(Connection c, String workflow, String rules) throws SQLException {
    return query(
        c, "SELECT queue.workflow_set_cancel_on('" + workflow + "', '" + rules + "'::jsonb)");
  }

  @Test
  void aSignalARuleNamesCancelsTheRunItGoesToWhenItsPayloadFits() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long a = start(c, "order", "{\"orderId\": 1}");
      long b = start(c, "order", "{\"orderId\": 2}");
      assertThat(rules(c, "order", "[{\"signal\": \"abort\", \"match\": {\"reason\": \"fraud\"}}]"))
          .isEqualTo("1");

      assertThat(signal(c, a, "abort", "{\"reason\": \"late\"}", null)).isEqualTo("buffered");
      assertThat(signal(c, a, "other", "{\"reason\": \"fraud\"}", null)).isEqualTo("buffered");
      assertThat(status(c, a)).isEqualTo("running");

      assertThat(signal(c, a, "abort", "{\"reason\": \"fraud\", \"by\": \"ops\"}", null))
          .isEqualTo("cancelled");
      assertThat(status(c, a)).isEqualTo("cancelled");
      assertThat(status(c, b)).isEqualTo("running");
      assertThat(signal(c, a, "abort", "{\"reason\": \"fraud\"}", null)).isEqualTo("not running");
    }
  }

  @Test
  void aPublishedMessageCancelsTheRunsWhoseInputHasItsFields() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long a = start(c, "ship", "{\"orderId\": 7, \"to\": \"Berlin\"}");
      long b = start(c, "ship", "{\"orderId\": 8}");
      long other = start(c, "bill", "{\"orderId\": 7}");
      rules(c, "ship", "[{\"topic\": \"orders.*.cancelled\", \"inputFields\": [\"orderId\"]}]");

      assertThat(
              rows(
                  c,
                  "SELECT coalesce(target_type, '') || ' ' || target || ' ' || id"
                      + " FROM queue.publish('orders.eu.cancelled', '{\"orderId\": 7}'::jsonb)"))
          .containsExactly("cancel ship " + a);
      assertThat(status(c, a)).isEqualTo("cancelled");
      assertThat(status(c, b)).isEqualTo("running");
      assertThat(status(c, other)).as("a workflow without the rule").isEqualTo("running");

      // A topic the pattern does not fit, and a payload without the field, cancel nothing.
      assertThat(rows(c, "SELECT id FROM queue.publish('orders.cancelled', '{\"orderId\": 8}')"))
          .isEmpty();
      assertThat(rows(c, "SELECT id FROM queue.publish('orders.eu.cancelled', '{\"id\": 8}')"))
          .isEmpty();
      assertThat(status(c, b)).isEqualTo("running");
    }
  }

  @Test
  void aRuleWithoutFieldsCancelsEveryRunningRunOfItsWorkflow() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long a = start(c, "nightly", "1");
      long b = start(c, "nightly", "{\"x\": 1}");
      rules(c, "nightly", "[{\"topic\": \"maintenance.#\", \"match\": {\"stop\": true}}]");

      assertThat(rows(c, "SELECT id FROM queue.publish('maintenance', '{\"stop\": false}')"))
          .isEmpty();
      assertThat(rows(c, "SELECT id FROM queue.publish('maintenance.db', '{\"stop\": true}')"))
          .containsExactly(String.valueOf(a), String.valueOf(b));
    }
  }

  @Test
  void rulesAreReplacedAsAWholeAndReadBackAsSet() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      rules(c, "w", "[{\"signal\": \"a\"}, {\"topic\": \"t.*\", \"inputFields\": [\"k\"]}]");
      assertThat(rules(c, "w", "[{\"signal\": \"b\", \"match\": {\"x\": 1}}]")).isEqualTo("1");
      assertThat(query(c, "SELECT queue.workflow_cancel_on_rules('w')"))
          .isEqualTo("[{\"match\": {\"x\": 1}, \"signal\": \"b\"}]");
      assertThat(rules(c, "w", "[]")).isEqualTo("0");
      assertThat(query(c, "SELECT queue.workflow_cancel_on_rules('w')")).isEqualTo("[]");
    }
  }

  @Test
  void aBadRuleIsRefusedNamingItAndChangesNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      rules(c, "w", "[{\"signal\": \"keep\"}]");
      String[][] bad = {
        {
          "[{\"signal\": \"a\", \"topic\": \"t\"}]", "rules[0] must name either a signal or a topic"
        },
        {"[{\"signal\": \"ok\"}, {}]", "rules[1] must name either a signal or a topic"},
        {"[{\"signal\": \"__child.1\"}]", "rules[0].signal must be a signal name"},
        {"[{\"topic\": \"a..b\"}]", "rules[0].topic"},
        {"[{\"signal\": \"a\", \"match\": [1]}]", "rules[0].match must be an object"},
        {"[{\"signal\": \"a\", \"inputFields\": []}]", "rules[0].inputFields must be 1 to 10"},
        {"[{\"signal\": \"a\", \"when\": 1}]", "rules[0] has a field other than"},
        {"{\"signal\": \"a\"}", "rules must be a JSON array"},
      };
      for (String[] b : bad) {
        assertThatThrownBy(() -> rules(c, "w", b[0]))
            .as(b[0])
            .isInstanceOf(SQLException.class)
            .hasMessageContaining(b[1])
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
      }
      assertThat(query(c, "SELECT queue.workflow_cancel_on_rules('w')"))
          .isEqualTo("[{\"signal\": \"keep\"}]");
      exec(c, "SELECT 1");
    }
  }
}
