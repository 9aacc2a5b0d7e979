package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Search attributes: defined with a type, set at start and later, checked against their type, and
 * selected by a query tree whose every value is bound.
 */
class SearchAttributesTest {
  private TestDatabase db;

  @BeforeEach
  void define() throws SQLException {
    db = TestDatabase.fresh();
    try (Connection c = db.connect()) {
      exec(c, "SELECT * FROM queue.search_attribute_define('customer', 'text')");
      exec(c, "SELECT * FROM queue.search_attribute_define('amount', 'number')");
      exec(c, "SELECT * FROM queue.search_attribute_define('tags', 'keyword_list')");
      exec(c, "SELECT * FROM queue.search_attribute_define('vip', 'boolean')");
      exec(c, "SELECT * FROM queue.search_attribute_define('dueOn', 'time')");
    }
  }

  private static long start(Connection c, String attributes) throws SQLException {
    return Long.parseLong(
        query(
            c,
            "SELECT run_id FROM queue.workflow_start('order', '{}', NULL, NULL, NULL, NULL, NULL,"
                + " '{\"attributes\": "
                + attributes
                + "}')"));
  }

  private static List<String> search(Connection c, String tree) throws SQLException {
    return rows(c, "SELECT run_id FROM queue.run_search('" + tree + "'::jsonb, NULL, 100)");
  }

  private static String count(Connection c, String tree) throws SQLException {
    return query(c, "SELECT queue.run_count('" + tree + "'::jsonb)");
  }

  @Test
  void aStartSetsAttributesAndAQuerySelectsByThemAndByTheRunsOwnFields() throws SQLException {
    try (Connection c = db.connect()) {
      long acme =
          start(
              c,
              "{\"customer\": \"acme\", \"amount\": 250, \"tags\": [\"eu\", \"rush\"], \"vip\":"
                  + " true, \"dueOn\": \"2026-12-03\"}");
      long globex = start(c, "{\"customer\": \"globex\", \"amount\": 40, \"tags\": [\"us\"]}");
      long acme2 = start(c, "{\"customer\": \"acme-east\", \"amount\": 99.5}");
      exec(
          c,
          "UPDATE queue.workflow_run SET status = 'failed', error = '\"x\"', completed_at = now(),"
              + " current_msg_id = NULL WHERE run_id = "
              + acme);

      assertThat(
              search(
                  c,
                  "{\"and\": [{\"field\": \"status\", \"op\": \"=\", \"value\": \"failed\"},"
                      + " {\"field\": \"customer\", \"op\": \"=\", \"value\": \"acme\"},"
                      + " {\"field\": \"amount\", \"op\": \">=\", \"value\": 100}]}"))
          .containsExactly(String.valueOf(acme));
      assertThat(search(c, "{\"field\": \"amount\", \"op\": \"<\", \"value\": 100}"))
          .containsExactly(String.valueOf(acme2), String.valueOf(globex));
      assertThat(
              search(c, "{\"field\": \"customer\", \"op\": \"starts_with\", \"value\": \"acme\"}"))
          .containsExactly(String.valueOf(acme2), String.valueOf(acme));
      assertThat(search(c, "{\"field\": \"tags\", \"op\": \"=\", \"value\": \"rush\"}"))
          .containsExactly(String.valueOf(acme));
      assertThat(search(c, "{\"field\": \"tags\", \"op\": \"in\", \"values\": [\"us\", \"eu\"]}"))
          .containsExactly(String.valueOf(globex), String.valueOf(acme));
      assertThat(search(c, "{\"not\": {\"field\": \"vip\", \"op\": \"=\", \"value\": true}}"))
          .containsExactly(String.valueOf(acme2), String.valueOf(globex));
      assertThat(
              search(
                  c, "{\"field\": \"dueOn\", \"op\": \">\", \"value\": \"2026-12-02T23:00:00Z\"}"))
          .containsExactly(String.valueOf(acme));
      assertThat(
              search(
                  c,
                  "{\"or\": [{\"field\": \"workflow\", \"op\": \"=\", \"value\": \"nothing\"},"
                      + " {\"field\": \"startedAt\", \"op\": \">\", \"value\": \"2020-01-01\"}]}"))
          .hasSize(3);
      assertThat(count(c, "{\"field\": \"status\", \"op\": \"=\", \"value\": \"running\"}"))
          .isEqualTo("2");
      assertThat(query(c, "SELECT queue.run_attributes(" + acme + ")::text"))
          .isEqualTo(
              "{\"vip\": true, \"tags\": [\"eu\", \"rush\"], \"dueOn\": \"2026-12-03T00:00:00.000000Z\","
                  + " \"amount\": 250, \"customer\": \"acme\"}");
    }
  }

  @Test
  void settingLaterReplacesOrRemovesOnlyTheNamedAttributes() throws SQLException {
    try (Connection c = db.connect()) {
      long run = start(c, "{\"customer\": \"acme\", \"amount\": 1}");
      assertThat(
              query(
                  c,
                  "SELECT queue.workflow_set_attributes('order', "
                      + run
                      + ", '{\"amount\": 2, \"customer\": null, \"tags\": [\"a\"]}')::text"))
          .isEqualTo("{\"tags\": [\"a\"], \"amount\": 2}");
      assertThatThrownBy(
              () -> query(c, "SELECT queue.workflow_set_attributes('other', " + run + ", '{}')"))
          .hasMessageContaining("not found");
    }
  }

  @Test
  void badAttributesAndQueriesAreRefusedNamingWhatIsWrongAndChangeNothing() throws SQLException {
    try (Connection c = db.connect()) {
      String before = query(c, "SELECT count(*) FROM queue.workflow_run");
      assertThatThrownBy(() -> start(c, "{\"amount\": \"x\"}"))
          .hasMessageContaining("attributes.amount is a number attribute: a number");
      assertThatThrownBy(() -> start(c, "{\"plan\": \"gold\"}"))
          .hasMessageContaining("attributes.plan is not a search attribute");
      assertThatThrownBy(() -> start(c, "{\"dueOn\": \"tomorrow\"}"))
          .hasMessageContaining("attributes.dueOn is a time attribute");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo(before);

      assertThatThrownBy(
              () ->
                  search(c, "{\"field\": \"amount\", \"op\": \"=\", \"value\": \"x\", \"pos\": 9}"))
          .hasMessageContaining("query at 9: amount is a number; \"x\" is not");
      assertThatThrownBy(() -> search(c, "{\"field\": \"plan\", \"op\": \"=\", \"value\": \"x\"}"))
          .hasMessageContaining("plan is neither a field of runs");
      assertThatThrownBy(
              () -> search(c, "{\"field\": \"customer\", \"op\": \">\", \"value\": \"x\"}"))
          .hasMessageContaining("customer is a text; > does not apply to it");
      assertThatThrownBy(
              () -> search(c, "{\"field\": \"status\", \"op\": \"=\", \"value\": \"lost\"}"))
          .hasMessageContaining("status is one of running");
      // A value is bound, never spliced: this one is only a customer nobody is.
      assertThat(
              search(
                  c,
                  "{\"field\": \"customer\", \"op\": \"=\", \"value\": \"x''); DROP TABLE"
                      + " queue.workflow_run; --\"}"))
          .isEmpty();

      assertThatThrownBy(
              () -> exec(c, "SELECT * FROM queue.search_attribute_define('amount', 'text')"))
          .hasMessageContaining("already a number attribute");
      assertThatThrownBy(
              () -> exec(c, "SELECT * FROM queue.search_attribute_define('status', 'text')"))
          .hasMessageContaining("is a field every run has");
      assertThatThrownBy(() -> exec(c, "SELECT * FROM queue.search_attribute_define('x', 'float')"))
          .hasMessageContaining("type must be text, keyword_list, number, boolean or time");
      assertThat(query(c, "SELECT count(*) FROM queue.search_attribute")).isEqualTo("5");
    }
  }
}
