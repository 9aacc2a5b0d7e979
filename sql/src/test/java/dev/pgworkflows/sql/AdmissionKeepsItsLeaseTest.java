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
 * A keyed run handed out by an admission that woke waiting runs for free slots, itself among them,
 * keeps the lease it was handed: its message stays invisible until the lease ends and its receipt
 * holds, so no other poll takes it meanwhile.
 */
class AdmissionKeepsItsLeaseTest {

  private static long start(Statement s) throws SQLException {
    try (ResultSet rs =
        s.executeQuery(
            "SELECT run_id FROM queue.workflow_start('adm', '1'::jsonb, NULL, NULL, NULL, 365,"
                + " NULL, '{\"concurrencyKey\": \"k\"}'::jsonb)")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The runs and receipts a poll of up to 10 tasks hands out. */
  private static List<long[]> poll(Connection c) throws SQLException {
    List<long[]> out = new ArrayList<>();
    try (PreparedStatement p =
        c.prepareStatement(
            "SELECT run_id, msg_id, receipt FROM queue.workflow_poll('adm', ARRAY[1], 10, 30)")) {
      try (ResultSet rs = p.executeQuery()) {
        while (rs.next()) {
          out.add(new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)});
        }
      }
    }
    return out;
  }

  @Test
  void aRunThatWokeItselfKeepsTheLeaseItWasHanded() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect();
        Statement s = c.createStatement()) {
      s.execute("SELECT queue.set_concurrency_limit('adm', 2)");
      long h1 = start(s);
      long h2 = start(s);
      long w = start(s);
      long x = start(s);
      assertThat(poll(c)).extracting(t -> t[0]).containsExactly(h1, h2);
      // The holders' slots free without waking anyone (their releases ran before the waiting
      // rows were there to see), and x comes back on its own to look again, as it does when a
      // release may be freeing a slot unseen.
      s.execute(
          "UPDATE queue.workflow_run SET slot_held = NULL WHERE run_id IN ("
              + h1
              + ", "
              + h2
              + ")");
      s.execute(
          "UPDATE \"queue\".\"q___wf_adm\" SET vt = clock_timestamp() WHERE group_id = '"
              + x
              + "'");

      List<long[]> handed = poll(c);
      assertThat(handed).extracting(t -> t[0]).containsExactly(x);
      try (ResultSet rs =
          s.executeQuery(
              "SELECT queue.receipt_of(vt), vt > clock_timestamp() FROM \"queue\".\"q___wf_adm\""
                  + " WHERE msg_id = "
                  + handed.get(0)[1])) {
        rs.next();
        assertThat(rs.getLong(1)).as("the receipt handed out holds").isEqualTo(handed.get(0)[2]);
        assertThat(rs.getBoolean(2)).as("leased: not visible").isTrue();
      }
      assertThat(poll(c))
          .extracting(t -> t[0])
          .as("w, woken for the other slot")
          .containsExactly(w);
    }
  }
}
