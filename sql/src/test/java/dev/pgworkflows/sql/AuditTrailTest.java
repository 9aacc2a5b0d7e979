package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** The audit trail's functions: what they record, what they refuse, how they list. */
class AuditTrailTest {

  @Test
  void entriesAreListedNewestFirstByCursorAndByAction() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String first =
          query(
              c,
              "SELECT queue.audit_record('ops', 'queue.purge', 'orders', '{\"purged\": 3}', 'r1')");
      query(c, "SELECT queue.audit_record('ops', 'run.cancel', 'hello/7')");
      String third = query(c, "SELECT queue.audit_record('admin-2', 'queue.purge', 'refunds')");

      assertThat(rows(c, "SELECT action || ' ' || target FROM queue.audit_list()"))
          .containsExactly("queue.purge refunds", "run.cancel hello/7", "queue.purge orders");
      assertThat(rows(c, "SELECT target FROM queue.audit_list(" + third + ", 1)"))
          .containsExactly("hello/7");
      assertThat(rows(c, "SELECT actor FROM queue.audit_list(NULL, 100, 'queue.purge')"))
          .containsExactly("admin-2", "ops");
      assertThat(
              query(
                  c,
                  "SELECT details ->> 'purged' || ' ' || request_id FROM queue.audit"
                      + " WHERE audit_id = "
                      + first))
          .isEqualTo("3 r1");
    }
  }

  @Test
  void aMalformedEntryIsRefusedAndNothingIsRecorded() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      for (String call :
          new String[] {
            "SELECT queue.audit_record('', 'queue.purge', 'q')",
            "SELECT queue.audit_record('ops', 'Purge', 'q')",
            "SELECT queue.audit_record('ops', 'purge', 'q')",
            "SELECT queue.audit_record('ops', 'queue.purge', 'q', '[1]')",
            "SELECT queue.audit_list(NULL, 0)"
          }) {
        assertThatThrownBy(() -> exec(c, call))
            .as(call)
            .isInstanceOf(SQLException.class)
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
      }
      assertThat(query(c, "SELECT count(*) FROM queue.audit")).isEqualTo("0");
    }
  }

  @Test
  void theTokenConfigurationIsRecordedOnlyWhenItChanges() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String workers = "'{\"tokens\": [{\"name\": \"ci\", \"scopes\": [\"worker\"]}]}'";
      String admins = "'{\"tokens\": [{\"name\": \"ci\", \"scopes\": [\"admin\", \"worker\"]}]}'";
      assertThat(query(c, "SELECT queue.audit_tokens(" + workers + ")")).isEqualTo("t");
      assertThat(query(c, "SELECT queue.audit_tokens(" + workers + ")")).isEqualTo("f");
      query(c, "SELECT queue.audit_record('ci', 'queue.purge', 'q')");
      assertThat(query(c, "SELECT queue.audit_tokens(" + admins + ")")).isEqualTo("t");
      assertThat(query(c, "SELECT queue.audit_tokens(" + admins + ")")).isEqualTo("f");
      assertThat(query(c, "SELECT queue.audit_tokens(" + workers + ")")).isEqualTo("t");
      assertThat(
              rows(
                  c,
                  "SELECT actor || ' ' || (details -> 'tokens' -> 0 -> 'scopes')::text"
                      + " FROM queue.audit_list(NULL, 100, 'tokens.configured')"))
          .containsExactly(
              "(configuration) [\"worker\"]",
              "(configuration) [\"admin\", \"worker\"]",
              "(configuration) [\"worker\"]");
    }
  }
}
