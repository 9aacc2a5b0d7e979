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
 * send, receive, delete and a FIFO group's promotion run statements prepared once per session.
 * PREPARE is not transactional, the session setting that remembers it is: both cases, and a queue
 * dropped and created again under its name, must keep working on the same connection; and a
 * statement whose text a migration changed while the session stayed open runs the new text.
 */
class PerQueueStatementsTest {

  @Test
  void aRolledBackFirstUseLeavesTheSessionWorking() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      q.create("rolled", false, 30, null);
      c.setAutoCommit(false);
      long lost = q.send("rolled", "{\"n\": 1}");
      assertThat(q.receive("rolled", 1)).extracting(QueueSql.Msg::id).containsExactly(lost);
      assertThat(q.delete("rolled", lost)).isTrue();
      c.rollback();
      c.setAutoCommit(true);
      // The statements exist, the setting that says so was rolled back.
      assertThat(
              q.scalarLong(
                  "SELECT count(*) FROM pg_prepared_statements"
                      + " WHERE name IN ('q_send_rolled', 'q_recv_rolled', 'q_del_rolled')"))
          .isEqualTo(3);
      assertThat(q.scalarLong("SELECT count(*) FROM queue.q_rolled")).isZero();

      long kept = q.send("rolled", "{\"n\": 2}");
      assertThat(q.receive("rolled", 1))
          .extracting(QueueSql.Msg::body)
          .containsExactly("{\"n\": 2}");
      assertThat(q.delete("rolled", kept)).isTrue();
      assertThat(q.delete("rolled", kept)).isFalse();
    }
  }

  @Test
  void aQueueDroppedAndCreatedAgainIsServedByTheSameSession() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      q.create("again", false, 30, null);
      long first = q.send("again", "{\"n\": 1}");
      assertThat(q.receive("again", 1)).extracting(QueueSql.Msg::id).containsExactly(first);
      try (Statement s = c.createStatement()) {
        s.execute("SELECT queue.drop_queue('again')");
      }
      q.create("again", true, 30, null);
      long second = q.send("again", "{\"n\": 2}", null, 0, "g");
      long third = q.send("again", "{\"n\": 3}", null, 0, "g");
      assertThat(q.receive("again", 10)).extracting(QueueSql.Msg::id).containsExactly(second);
      assertThat(q.delete("again", second)).isTrue();
      assertThat(q.receive("again", 10)).extracting(QueueSql.Msg::id).containsExactly(third);
    }
  }

  @Test
  void nullsAndQuotesTravelThroughThePreparedStatementsUnchanged() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      q.create("quotes", true, 30, null);
      String body = "{\"s\": \"it's a \\\"quote\\\" and a \\\\ backslash\"}";
      long id = q.send("quotes", body, "{\"h\": \"'; DROP TABLE x; --\"}", 0, "o'brien");
      QueueSql.Msg m = q.receive("quotes", 1).get(0);
      assertThat(m.id()).isEqualTo(id);
      assertThat(m.body()).isEqualTo(body);
      assertThat(m.headers()).isEqualTo("{\"h\": \"'; DROP TABLE x; --\"}");
      assertThat(m.groupId()).isEqualTo("o'brien");
      assertThat(q.scalarLong("SELECT count(*) FROM queue.q_quotes WHERE body @> '{}'")).isOne();
    }
  }

  @Test
  void aGroupsNextMessageIsPromotedThroughAPreparedStatementWhateverItsName() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      q.create("groups", true, 30, null);
      for (String group : new String[] {"o'brien", "plain"}) {
        long head = q.send("groups", "{\"n\": 1}", null, 0, group);
        long next = q.send("groups", "{\"n\": 2}", null, 0, group);
        assertThat(q.receive("groups", 10)).extracting(QueueSql.Msg::id).containsExactly(head);
        assertThat(q.delete("groups", head)).isTrue();
        assertThat(q.receive("groups", 10)).extracting(QueueSql.Msg::id).containsExactly(next);
        assertThat(q.delete("groups", next)).isTrue();
      }
      assertThat(
              q.scalarLong(
                  "SELECT count(*) FROM pg_prepared_statements WHERE name = 'q_promote_groups'"))
          .isOne();
    }
  }

  @Test
  void aStatementWhoseTextChangedIsPreparedAgainInTheSameSession() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      assertThat(runPrepared(c, "SELECT $1 + 1")).isEqualTo(42);
      long preparedAt = preparedAt(q);
      // The same text again is a hit: not prepared again.
      assertThat(runPrepared(c, "SELECT $1 + 1")).isEqualTo(42);
      assertThat(preparedAt(q)).isEqualTo(preparedAt);
      // A later function body with another text under the same name gets its own text.
      assertThat(runPrepared(c, "SELECT $1 + 2")).isEqualTo(43);
      assertThat(
              q.scalarLong(
                  "SELECT count(*) FROM pg_prepared_statements"
                      + " WHERE name = 'p_text' AND statement LIKE '%$1 + 2'"))
          .isOne();
      // And the first text again, as a session of an older body would ask.
      assertThat(runPrepared(c, "SELECT $1 + 1")).isEqualTo(42);
    }
  }

  @Test
  void aStatementTheSettingForgotIsNotPreparedTwice() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      assertThat(runPrepared(c, "SELECT $1 + 1")).isEqualTo(42);
      long preparedAt = preparedAt(q);
      try (Statement s = c.createStatement()) {
        s.execute("RESET queue.prepared");
      }
      assertThat(runPrepared(c, "SELECT $1 + 1")).isEqualTo(42);
      assertThat(preparedAt(q)).isEqualTo(preparedAt);
    }
  }

  /**
   * Asks prepared_sql for statement p_text with this text and 41 as its argument, as a function
   * body does, and runs the command it answers.
   */
  private static long runPrepared(Connection c, String text) throws SQLException {
    String command;
    try (PreparedStatement ps =
        c.prepareStatement("SELECT queue.prepared_sql('p_text', 'unused', ?, 'bigint', '41')")) {
      ps.setString(1, text);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        command = rs.getString(1);
      }
    }
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(command)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** When the session prepared p_text, in microseconds. */
  private static long preparedAt(QueueSql q) throws SQLException {
    return q.scalarLong(
        "SELECT (extract(epoch FROM prepare_time) * 1000000)::bigint"
            + " FROM pg_prepared_statements WHERE name = 'p_text'");
  }
}
