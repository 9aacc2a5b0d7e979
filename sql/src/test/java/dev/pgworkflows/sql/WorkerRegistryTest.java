package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * The workers registry as servers write it: the newest sighting of a worker wins whichever server
 * reports it, a goodbye deletes only a row its own server reported last, and stale rows are left
 * out of the listing and expired.
 */
class WorkerRegistryTest {

  private static String seen(String id, long agoMs, String mode) {
    return "{\"id\": \""
        + id
        + "\", \"workflow\": \"wf\", \"host\": \"h-"
        + id
        + "\", \"versions\": [1, 2], \"slots\": 8, \"mode\": \""
        + mode
        + "\", \"agoMs\": "
        + agoMs
        + "}";
  }

  private static void report(Connection c, String server, String seen, String gone)
      throws SQLException {
    exec(c, "SELECT queue.worker_report('" + server + "', '" + seen + "', '" + gone + "')");
  }

  @Test
  void theNewestSightingWinsAndAGoodbyeDeletesOnlyItsOwnServersRow() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      report(c, "s1:1", "[" + seen("w1", 0, "stream") + "]", "[]");
      // An older sighting by another server changes nothing.
      report(c, "s2:2", "[" + seen("w1", 20_000, "poll") + "]", "[]");
      assertThat(query(c, "SELECT server_id || ' ' || mode FROM queue.worker_seen"))
          .isEqualTo("s1:1 stream");
      assertThat(query(c, "SELECT versions::text || ' ' || slots FROM queue.worker_seen"))
          .isEqualTo("{1,2} 8");

      // A goodbye to the other server leaves the row; one to its own server deletes it.
      report(c, "s2:2", "[]", "[{\"id\": \"w1\", \"workflow\": \"wf\"}]");
      assertThat(query(c, "SELECT count(*) FROM queue.worker_seen")).isEqualTo("1");
      report(c, "s1:1", "[]", "[{\"id\": \"w1\", \"workflow\": \"wf\"}]");
      assertThat(query(c, "SELECT count(*) FROM queue.worker_seen")).isEqualTo("0");
    }
  }

  @Test
  void staleWorkersAreLeftOutOfTheListingAndExpired() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      report(
          c,
          "s1:1",
          "[" + seen("fresh", 0, "poll") + ", " + seen("old", 40_000, "poll") + "]",
          "[]");
      assertThat(rows(c, "SELECT worker_id FROM queue.worker_list('wf', 30000)"))
          .containsExactly("fresh");
      assertThat(rows(c, "SELECT worker_id FROM queue.worker_list(NULL, 60000)"))
          .containsExactly("fresh", "old");
      assertThat(query(c, "SELECT queue.worker_expire(30000)")).isEqualTo("1");
      assertThat(rows(c, "SELECT worker_id FROM queue.worker_seen")).containsExactly("fresh");
    }
  }

  @Test
  void aTaskBehindAnOlderMessageOfItsGroupNamesThatMessage() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long run =
          Long.parseLong(
              query(c, "SELECT run_id FROM queue.workflow_start('grouped', '1'::jsonb)"));
      String older =
          query(c, "SELECT current_msg_id FROM queue.workflow_run WHERE run_id = " + run);
      // The run's task behind another message of its group, which the engine itself never leaves
      // for long: a second message in the group is not its head.
      String task =
          query(
              c,
              "SELECT queue.enqueue('__wf_grouped', '{\"v\": 1, \"reason\": \"resume\"}', NULL, 0, '"
                  + run
                  + "')");
      exec(c, "UPDATE queue.workflow_run SET current_msg_id = " + task + " WHERE run_id = " + run);
      String blockers = query(c, "SELECT queue.workflow_blockers('grouped', " + run + ")::text");
      assertThat(blockers)
          .contains("\"kind\": \"behind_group\"")
          .contains("\"messageId\": " + older);
      assertThat(query(c, "SELECT queue.workflow_blockers('grouped', " + (run + 1) + ") IS NULL"))
          .isEqualTo("t");
    }
  }
}
