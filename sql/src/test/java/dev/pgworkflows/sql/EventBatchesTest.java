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

/**
 * A workflow subscription that batches starts one run per batch: when the batch fills, or when its
 * time comes, per key; the messages wait in the database until then.
 */
class EventBatchesTest {

  private static String publish(Connection c, String topic, String body) throws SQLException {
    return query(
        c,
        "SELECT string_agg(target_type || ':' || id, ',') FROM queue.publish('"
            + topic
            + "', '"
            + body
            + "'::jsonb)");
  }

  @Test
  void aFullBatchStartsOneRunWithTheMessagesAsItsInput() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT * FROM queue.subscribe('clicks.#', 'workflow', 'tally', NULL, 3, 60000)");
      assertThat(publish(c, "clicks.home", "{\"n\": 1}")).startsWith("batched:");
      assertThat(publish(c, "clicks.cart", "{\"n\": 2}")).startsWith("batched:");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("0");
      String run = publish(c, "clicks.home", "{\"n\": 3}");
      assertThat(run).startsWith("workflow:");
      assertThat(
              query(
                  c,
                  "SELECT input::text FROM queue.workflow_run WHERE run_id = " + run.substring(9)))
          .isEqualTo("[{\"n\": 1}, {\"n\": 2}, {\"n\": 3}]");
      assertThat(query(c, "SELECT count(*) FROM queue.batch_item")).isEqualTo("0");
      assertThat(query(c, "SELECT count(*) FROM queue.batch_open")).isEqualTo("0");
    }
  }

  @Test
  void aKeyedSubscriptionBatchesEachKeyOnItsOwn() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(
          c,
          "SELECT * FROM queue.subscribe('orders.#', 'workflow', 'digest', NULL, 2, 60000,"
              + " '$.customer')");
      publish(c, "orders.new", "{\"customer\": \"a\", \"n\": 1}");
      publish(c, "orders.new", "{\"customer\": \"b\", \"n\": 2}");
      assertThat(publish(c, "orders.new", "{\"customer\": \"a\", \"n\": 3}"))
          .startsWith("workflow:");
      assertThat(rows(c, "SELECT input::text FROM queue.workflow_run"))
          .containsExactly("[{\"n\": 1, \"customer\": \"a\"}, {\"n\": 3, \"customer\": \"a\"}]");
      assertThat(rows(c, "SELECT batch_key FROM queue.batch_item")).containsExactly("b");
    }
  }

  @Test
  void aBatchWhoseTimeHasComeIsStartedHoweverFewItHolds() throws Exception {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT * FROM queue.subscribe('pings', 'workflow', 'ping', NULL, 100, 50)");
      publish(c, "pings", "1");
      publish(c, "pings", "2");
      assertThat(query(c, "SELECT count(*) FROM queue.batch_flush_due(10)")).isEqualTo("0");
      Thread.sleep(100);
      assertThat(
              query(c, "SELECT concat_ws(' ', workflow_name, size) FROM queue.batch_flush_due(10)"))
          .isEqualTo("ping 2");
      assertThat(rows(c, "SELECT input::text FROM queue.workflow_run")).containsExactly("[1, 2]");
      assertThat(query(c, "SELECT count(*) FROM queue.batch_flush_due(10)")).isEqualTo("0");
    }
  }

  @Test
  void badBatchSettingsAreRefusedNamingTheFieldAndSubscribeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      assertThatThrownBy(
              () -> exec(c, "SELECT * FROM queue.subscribe('a', 'workflow', 'w', NULL, 0, 1000)"))
          .hasMessageContaining("batch.maxSize");
      assertThatThrownBy(
              () ->
                  exec(
                      c, "SELECT * FROM queue.subscribe('a', 'workflow', 'w', NULL, 100000, 1000)"))
          .hasMessageContaining("batch.maxSize");
      assertThatThrownBy(
              () -> exec(c, "SELECT * FROM queue.subscribe('a', 'workflow', 'w', NULL, 10, NULL)"))
          .hasMessageContaining("go together");
      assertThatThrownBy(
              () ->
                  exec(
                      c,
                      "SELECT * FROM queue.subscribe('a', 'workflow', 'w', NULL, 10, 1000, '$.[')"))
          .hasMessageContaining("batch.key is not a JSON path");
      exec(c, "SELECT queue.create_queue('q1', false, 30, NULL)");
      assertThatThrownBy(
              () -> exec(c, "SELECT * FROM queue.subscribe('a', 'queue', 'q1', NULL, 10, 1000)"))
          .hasMessageContaining("workflow subscription only");
      assertThat(query(c, "SELECT count(*) FROM queue.subscription")).isEqualTo("0");
      exec(c, "SELECT * FROM queue.subscribe('a', 'workflow', 'w', NULL, 10, 1000)");
      assertThatThrownBy(
              () -> exec(c, "SELECT * FROM queue.subscribe('a', 'workflow', 'w', NULL, 20, 1000)"))
          .hasMessageContaining("other batch settings");
    }
  }
}
