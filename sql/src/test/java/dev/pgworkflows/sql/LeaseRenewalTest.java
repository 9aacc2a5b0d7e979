package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.inline;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * An inline continuation keeps the held message as it is while enough of the lease is left (no new
 * row version, the same receipt), renews the lease once less than two thirds of it are left, and
 * still refuses a receipt that no longer holds the lease. Through the batch function and the
 * single-run one alike.
 */
class LeaseRenewalTest {

  private record Row(String ctid, long receipt, int readCount, String reason, double leftSeconds) {}

  @Test
  void aBatchContinuationLeavesAFreshLeaseAloneAndRenewsAWornOne() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "kept");
      Held other = startAndPoll(c, "kept");
      // The first continuation changes the reason and nothing else: same vt, same receipt.
      Row before = row(c, "kept", h.msg());
      assertThat(before.readCount()).isEqualTo(1);
      assertThat(before.reason()).isEqualTo("start");
      String[] first = batchInline(c, "kept", h, "a", other, "a");
      assertThat(first[0]).isEqualTo("ok:" + h.receipt());
      Row afterFirst = row(c, "kept", h.msg());
      assertThat(afterFirst.reason()).isEqualTo("resume");
      assertThat(afterFirst.receipt()).isEqualTo(h.receipt());

      // The worker's retry of a continuation that went through is a duplicate and leaves the
      // message with the run.
      assertThat(batchInline(c, "kept", h, "a", other, "a")[0]).isEqualTo("duplicate:");
      assertThat(row(c, "kept", h.msg()).ctid()).isEqualTo(afterFirst.ctid());

      // The next one changes nothing: the row version stays.
      String[] second = batchInline(c, "kept", h, "b", other, "b");
      assertThat(second[0]).isEqualTo("ok:" + h.receipt());
      assertThat(row(c, "kept", h.msg()).ctid()).isEqualTo(afterFirst.ctid());

      // Worn down to 30 of 60 seconds: renewed, with a new receipt.
      wear(c, "kept", h.msg(), 30);
      long worn = row(c, "kept", h.msg()).receipt();
      String[] third = batchInline(c, "kept", new Held(h.run(), h.msg(), worn), "c", other, "c");
      Row renewed = row(c, "kept", h.msg());
      assertThat(renewed.receipt()).isNotEqualTo(worn);
      assertThat(third[0]).isEqualTo("ok:" + renewed.receipt());
      assertThat(renewed.leftSeconds()).isBetween(55.0, 60.5);

      // The old receipt no longer holds it; the journal has a, b, c once.
      String[] stale = batchInline(c, "kept", new Held(h.run(), h.msg(), worn), "d", other, "d");
      assertThat(stale[0]).isEqualTo("stale:");
      assertThat(steps(c, h.run())).isEqualTo("a,b,c");
    }
  }

  @Test
  void aSingleContinuationDoesTheSame() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "single");
      assertThat(inline(c, h, "a")).isEqualTo("ok:" + h.receipt());
      Row afterFirst = row(c, "single", h.msg());
      assertThat(afterFirst.reason()).isEqualTo("resume");
      assertThat(inline(c, h, "a")).isEqualTo("duplicate:");
      assertThat(row(c, "single", h.msg()).receipt()).isEqualTo(h.receipt());
      assertThat(inline(c, h, "b")).isEqualTo("ok:" + h.receipt());
      assertThat(row(c, "single", h.msg()).ctid()).isEqualTo(afterFirst.ctid());

      wear(c, "single", h.msg(), 10);
      long worn = row(c, "single", h.msg()).receipt();
      String renewed = inline(c, new Held(h.run(), h.msg(), worn), "c");
      Row now = row(c, "single", h.msg());
      assertThat(now.receipt()).isNotEqualTo(worn);
      assertThat(renewed).isEqualTo("ok:" + now.receipt());
      assertThat(now.leftSeconds()).isBetween(55.0, 60.5);
      assertThat(inline(c, new Held(h.run(), h.msg(), worn), "d")).isEqualTo("stale:");
      assertThat(steps(c, h.run())).isEqualTo("a,b,c");
    }
  }

  /** Two inline completions in one batch; "outcome:receipt" of the first. */
  private static String[] batchInline(
      Connection c, String workflow, Held a, String stepA, Held b, String stepB)
      throws SQLException {
    String items = "[" + inlineItem(a, stepA) + ", " + inlineItem(b, stepB) + "]";
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT outcome, next_receipt FROM queue.workflow_complete_batch(?, ?::jsonb)"
                + " ORDER BY ord")) {
      ps.setString(1, workflow);
      ps.setString(2, items);
      try (ResultSet rs = ps.executeQuery()) {
        String[] out = new String[2];
        for (int i = 0; i < 2; i++) {
          assertThat(rs.next()).isTrue();
          out[i] = rs.getString(1) + ":" + (rs.getString(2) == null ? "" : rs.getString(2));
        }
        return out;
      }
    }
  }

  private static String inlineItem(Held h, String step) {
    return String.format(
        "{\"run_id\": %d, \"msg_id\": %d, \"receipt\": %d, \"step_name\": \"%s\","
            + " \"step_kind\": \"run\", \"output\": 1, \"next\": {\"inline\": true}, \"lease\": 60}",
        h.run(), h.msg(), h.receipt(), step);
  }

  private static Row row(Connection c, String workflow, long msg) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT ctid::text, queue.receipt_of(vt), read_ct, body ->> 'reason',"
                    + " extract(epoch FROM vt - clock_timestamp())::float8 FROM queue.q___wf_"
                    + workflow
                    + " WHERE msg_id = "
                    + msg)) {
      assertThat(rs.next()).isTrue();
      return new Row(
          rs.getString(1), rs.getLong(2), rs.getInt(3), rs.getString(4), rs.getDouble(5));
    }
  }

  /** Moves the held message's lease end to {@code seconds} from now, as time passing would. */
  private static void wear(Connection c, String workflow, long msg, int seconds)
      throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(
          "UPDATE queue.q___wf_"
              + workflow
              + " SET vt = clock_timestamp() + interval '"
              + seconds
              + " seconds' WHERE msg_id = "
              + msg);
    }
  }

  private static String steps(Connection c, long run) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT string_agg(step_name, ',' ORDER BY seq) FROM queue.workflow_step"
                    + " WHERE run_id = "
                    + run)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
