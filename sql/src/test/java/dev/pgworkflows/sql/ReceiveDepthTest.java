package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * receive_fifo's cost must not grow with queue depth. Counted, not timed: the tuples that receiving
 * reads (index entries and heap rows, from the transaction's own statistics) are compared at depth
 * 1,000 and 100,000.
 */
class ReceiveDepthTest {

  @Test
  void tuplesReadPerReceiveAreFlatInQueueDepth() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      long small = tuplesReadByReceiving(c, q, "depth_1k", 1_000, 1);
      long deepGroups = tuplesReadByReceiving(c, q, "depth_100k_deep", 1_000, 100);
      long manyGroups = tuplesReadByReceiving(c, q, "depth_100k_wide", 100_000, 1);
      System.out.printf(
          "receive_fifo tuples read for 20 receives: depth 1k %d; 100k in 1k groups %d;"
              + " 100k in 100k groups %d%n",
          small, deepGroups, manyGroups);
      assertThat(deepGroups).isLessThanOrEqualTo(Math.round(small * 1.5) + 20);
      assertThat(manyGroups).isLessThanOrEqualTo(Math.round(small * 1.5) + 20);
    }
  }

  @Test
  void tuplesReadPerHandOutAreFlatInParkedRunsOfLimitedKeys() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      long small = tuplesReadByKeyedHandOuts(c, q, "keyed_1k", 1_000);
      long deep = tuplesReadByKeyedHandOuts(c, q, "keyed_100k", 100_000);
      System.out.printf(
          "workflow_poll tuples read for 20 slot hand-overs: 1k parked runs %d; 100k %d%n",
          small, deep);
      assertThat(deep).isLessThanOrEqualTo(Math.round(small * 1.5) + 20);
    }
  }

  /**
   * A workflow with a limit of 2 per key over 10 keys, every slot held and {@code parked} runs
   * waiting; then 20 times a holder ends and the run its slot woke is handed out. The tuples those
   * read (the queue, its ready index, the runs, the waiting list, the slot index).
   */
  private static long tuplesReadByKeyedHandOuts(
      Connection c, QueueSql q, String workflow, int parked) throws SQLException {
    String queue = "__wf_" + workflow;
    try (Statement s = c.createStatement()) {
      s.execute("SELECT queue.set_concurrency_limit('" + workflow + "', 2)");
      s.execute(
          "SELECT count(*) FROM queue.workflow_start_batch('"
              + workflow
              + "', (SELECT jsonb_agg(jsonb_build_object('input', g, 'concurrencyKey', 'key-' || (g % 10)))"
              + " FROM generate_series(1, 20) g))");
      s.execute("SELECT count(*) FROM queue.workflow_poll('" + workflow + "', '{1}', 20, 600)");
      // The parked runs, bulk: each a run of one of the keys whose message is parked.
      s.execute(
          "WITH r AS (SELECT nextval(pg_get_serial_sequence('queue.workflow_run', 'run_id')) AS run_id"
              + "           FROM generate_series(1, "
              + parked
              + ")),"
              + " m AS (INSERT INTO queue.q_"
              + queue
              + " (group_id, head, enqueued_at, vt, body)"
              + "       SELECT run_id::text, true, now(), queue.parked_vt(), '{\"v\": 1, \"reason\": \"start\"}'"
              + "         FROM r RETURNING msg_id, group_id)"
              + " INSERT INTO queue.workflow_run (run_id, workflow_name, workflow_version, input,"
              + "     retention_days, current_msg_id, concurrency_key) OVERRIDING SYSTEM VALUE"
              + " SELECT m.group_id::bigint, '"
              + workflow
              + "', 1, 'null', 30, m.msg_id, 'key-' || (m.group_id::bigint % 10) FROM m");
      s.execute(
          "INSERT INTO queue.concurrency_wait (workflow_name, concurrency_key, run_id, msg_id)"
              + " SELECT workflow_name, concurrency_key, run_id, current_msg_id FROM queue.workflow_run"
              + " WHERE workflow_name = '"
              + workflow
              + "' AND slot_held IS NULL");
      s.execute("ANALYZE queue.q_" + queue);
      s.execute("ANALYZE queue.workflow_run");
      s.execute("ANALYZE queue.concurrency_wait");
    }
    List<long[]> held = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT r.run_id, r.current_msg_id, queue.receipt_of(m.vt)"
                    + " FROM queue.workflow_run r JOIN queue.q_"
                    + queue
                    + " m ON m.msg_id = r.current_msg_id"
                    + " WHERE r.workflow_name = '"
                    + workflow
                    + "' AND r.slot_held ORDER BY r.run_id")) {
      while (rs.next()) {
        held.add(new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)});
      }
    }
    assertThat(held).hasSize(20);
    String counted =
        "SELECT pg_stat_get_xact_tuples_returned('queue.q_%1$s_ready'::regclass)"
            + " + pg_stat_get_xact_tuples_fetched('queue.q_%1$s'::regclass)"
            + " + pg_stat_get_xact_tuples_returned('queue.q_%1$s'::regclass)"
            + " + pg_stat_get_xact_tuples_fetched('queue.workflow_run'::regclass)"
            + " + pg_stat_get_xact_tuples_returned('queue.workflow_run_slot_idx'::regclass)"
            + " + pg_stat_get_xact_tuples_fetched('queue.concurrency_wait'::regclass)"
            + " + pg_stat_get_xact_tuples_returned('queue.concurrency_wait_pkey'::regclass)";
    c.setAutoCommit(false);
    try (PreparedStatement end =
            c.prepareStatement(
                "SELECT outcome FROM queue.workflow_complete_step(?, ?, ?, 'only', 'run',"
                    + " '1'::jsonb, NULL, NULL, NULL, '{\"status\": \"completed\", \"output\": 1}'::jsonb, 600)");
        PreparedStatement poll =
            c.prepareStatement(
                "SELECT run_id, msg_id, receipt FROM queue.workflow_poll(?, '{1}', 1, 600)")) {
      long before = q.scalarLong(String.format(counted, queue));
      for (int i = 0; i < 20; i++) {
        long[] h = held.remove(0);
        end.setLong(1, h[0]);
        end.setLong(2, h[1]);
        end.setLong(3, h[2]);
        try (ResultSet rs = end.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getString(1)).isEqualTo("ok");
        }
        poll.setString(1, workflow);
        try (ResultSet rs = poll.executeQuery()) {
          assertThat(rs.next()).as("the run the freed slot woke").isTrue();
          held.add(new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)});
          assertThat(rs.next()).isFalse();
        }
      }
      return q.scalarLong(String.format(counted, queue)) - before;
    } finally {
      c.commit();
      c.setAutoCommit(true);
    }
  }

  /** Fills groups x perGroup messages, then counts the tuples read by 20 receives of 10. */
  private static long tuplesReadByReceiving(
      Connection c, QueueSql q, String queue, int groups, int perGroup) throws SQLException {
    q.create(queue, true, 600, null);
    try (Statement s = c.createStatement()) {
      // Bulk fill straight into the table: one head per group, the rest waiting behind it.
      s.execute(
          "INSERT INTO queue.q_"
              + queue
              + " (group_id, head, enqueued_at, vt, body)"
              + " SELECT 'g' || g, n = 1, now(), now(), jsonb_build_object('g', g, 'n', n)"
              + " FROM generate_series(1, "
              + groups
              + ") g, generate_series(1, "
              + perGroup
              + ") n ORDER BY n, g");
      s.execute("ANALYZE queue.q_" + queue);
    }
    assertThat(q.scalarLong("SELECT depth FROM queue.queue_metrics('" + queue + "')"))
        .isEqualTo((long) groups * perGroup);
    // The xact counters hold whatever this backend has not flushed yet, so take a difference.
    String counted =
        "SELECT pg_stat_get_xact_tuples_returned('queue.q_%1$s_ready'::regclass)"
            + " + pg_stat_get_xact_tuples_fetched('queue.q_%1$s'::regclass)"
            + " + pg_stat_get_xact_tuples_returned('queue.q_%1$s'::regclass)";
    c.setAutoCommit(false);
    try {
      long before = q.scalarLong(String.format(counted, queue));
      for (int i = 0; i < 20; i++) {
        assertThat(q.receiveFifo(queue, 10, null)).hasSize(10);
      }
      return q.scalarLong(String.format(counted, queue)) - before;
    } finally {
      c.commit();
      c.setAutoCommit(true);
    }
  }
}
