package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * A run ended by a completion batch acks its message, and the next message of its group becomes the
 * group's head, batch after batch in one session (the promotion is prepared once and reused).
 */
class BatchEndsRunsTest {

  @Test
  void theNextMessageOfAnEndedRunsGroupBecomesItsHead() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      for (int round = 0; round < 3; round++) {
        long run;
        long msg;
        long receipt;
        try (Statement s = c.createStatement()) {
          s.execute("SELECT queue.workflow_start('ends', '1'::jsonb)");
          try (ResultSet rs =
              s.executeQuery(
                  "SELECT run_id, msg_id, receipt FROM queue.workflow_poll('ends', '{1}', 1, 60)")) {
            assertThat(rs.next()).isTrue();
            run = rs.getLong(1);
            msg = rs.getLong(2);
            receipt = rs.getLong(3);
          }
        }
        long next =
            q.scalarLong("SELECT queue.enqueue('__wf_ends', '{\"v\": 1}', NULL, 0, '" + run + "')");
        assertThat(q.scalarLong("SELECT head::int FROM queue.q___wf_ends WHERE msg_id = " + next))
            .isZero();
        String items = QueueSql.finishingBatch(run, msg, receipt);
        try (PreparedStatement ps =
            c.prepareStatement(
                "SELECT outcome FROM queue.workflow_complete_batch('ends', ?::jsonb)")) {
          ps.setString(1, items);
          try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("ok");
          }
        }
        assertThat(q.scalarLong("SELECT count(*) FROM queue.q___wf_ends WHERE msg_id = " + msg))
            .isZero();
        assertThat(q.scalarLong("SELECT head::int FROM queue.q___wf_ends WHERE msg_id = " + next))
            .as("round %d", round)
            .isEqualTo(1);
        // Out of the way of the next round's poll.
        q.scalarLong("SELECT queue.delete('__wf_ends', " + next + ")::int");
      }
    }
  }
}
