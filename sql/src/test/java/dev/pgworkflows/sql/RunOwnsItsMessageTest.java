package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * A write names a run and a message, and the message must be the run's own: holding one run's task
 * gives no hold on another run. Naming another run's message is stale and changes nothing, through
 * every function a worker writes with; a write for a finished run acks the named message only when
 * it is that run's.
 */
class RunOwnsItsMessageTest {

  @Test
  void anotherRunsMessageHoldsNoLeaseOnARun() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held a = startAndPoll(c, "own");
      Held b = startAndPoll(c, "own");
      // b's run named with a's message and receipt, every way a worker writes.
      Held crossed = new Held(b.run(), a.msg(), a.receipt());
      assertThat(single(c, crossed, "{\"inline\": true}", null)).isEqualTo("stale");
      assertThat(single(c, crossed, null, "{\"status\": \"completed\", \"output\": 1}"))
          .isEqualTo("stale");
      assertThat(batch(c, crossed, "\"next\": {\"inline\": true}")).isEqualTo("stale");
      assertThat(batch(c, crossed, "\"result\": {\"status\": \"completed\", \"output\": 1}"))
          .isEqualTo("stale");
      assertThat(scalar(c, "SELECT queue.workflow_retry(%d, %d, %d, 60000)", crossed))
          .isEqualTo("stale");
      assertThat(scalar(c, "SELECT queue.workflow_extend_lease(%d, %d, %d, 600)", crossed))
          .isNull();

      // Nothing changed: no step journaled for b, both runs running, a's message as it was.
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step")).isEqualTo("0");
      assertThat(query(c, "SELECT string_agg(status::text, ',') FROM queue.workflow_run"))
          .isEqualTo("running,running");
      assertThat(
              query(
                  c, "SELECT queue.receipt_of(vt) FROM queue.q___wf_own WHERE msg_id = " + a.msg()))
          .isEqualTo(Long.toString(a.receipt()));

      // Each run's own message still works.
      assertThat(single(c, a, null, "{\"status\": \"completed\", \"output\": 1}")).isEqualTo("ok");
      assertThat(batch(c, b, "\"next\": {\"inline\": true}")).isEqualTo("ok");

      // a is finished: a write naming it with b's message answers not_running and leaves b's
      // message alone.
      Held late = new Held(a.run(), b.msg(), b.receipt());
      assertThat(single(c, late, "{\"inline\": true}", null)).isEqualTo("not_running");
      assertThat(scalar(c, "SELECT queue.workflow_retry(%d, %d, %d, 0)", late))
          .isEqualTo("not_running");
      assertThat(query(c, "SELECT count(*) FROM queue.q___wf_own WHERE msg_id = " + b.msg()))
          .isEqualTo("1");
      assertThat(batch(c, b, "\"result\": {\"status\": \"completed\", \"output\": 2}"))
          .isEqualTo("ok");
    }
  }

  /** The outcome of a lone completion without a step; {@code next} and {@code result} JSON. */
  private static String single(Connection c, Held h, String next, String result)
      throws SQLException {
    return complete(c, h, null, literal(next), literal(result), "60").split(":")[0];
  }

  private static String literal(String json) {
    return json == null ? "NULL" : "'" + json + "'";
  }

  /** A batch of one completion ({@code rest} is its next or result); its outcome. */
  private static String batch(Connection c, Held h, String rest) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT outcome FROM queue.workflow_complete_batch('own', ?::jsonb)")) {
      ps.setString(
          1,
          String.format(
              "[{\"run_id\": %d, \"msg_id\": %d, \"receipt\": %d, %s}]",
              h.run(), h.msg(), h.receipt(), rest));
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1);
      }
    }
  }

  private static String scalar(Connection c, String sql, Held h) throws SQLException {
    return query(c, String.format(sql, h.run(), h.msg(), h.receipt()));
  }
}
