package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * receive_fifo's cost must not grow with queue depth. Counted, not timed: the tuples that receiving
 * reads (index entries and heap rows, from the transaction's own statistics) are compared at depth
 * 1,000 and 100,000.
 */
@Timeout(120)
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
