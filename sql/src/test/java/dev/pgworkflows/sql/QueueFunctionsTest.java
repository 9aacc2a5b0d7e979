package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class QueueFunctionsTest {
  private static Connection c;
  private static QueueSql q;

  @BeforeAll
  static void connect() throws SQLException {
    c = TestDatabase.fresh().connect();
    q = new QueueSql(c);
  }

  @AfterAll
  static void close() throws SQLException {
    c.close();
  }

  private static String sqlState(ThrowingRunnable r) {
    try {
      r.run();
    } catch (SQLException e) {
      return e.getSQLState();
    }
    throw new AssertionError("expected an SQLException");
  }

  interface ThrowingRunnable {
    void run() throws SQLException;
  }

  private static long tableCount() throws SQLException {
    return q.scalarLong(
        "SELECT count(*) FROM pg_tables WHERE schemaname = 'queue' AND tablename LIKE 'q\\_%'");
  }

  @Test
  void nextVisibleAtLooksOnlyAhead() throws SQLException {
    q.create("ahead", false, 30, null);
    String next = "SELECT coalesce(extract(epoch FROM queue.next_visible_at('ahead') - now()), -1)";
    assertThat(q.scalarLong(next)).as("empty queue").isEqualTo(-1);
    q.send("ahead", "{}");
    assertThat(q.scalarLong(next)).as("visible now: nothing ahead").isEqualTo(-1);
    q.send("ahead", "{}", null, 60, null);
    assertThat(q.scalarLong(next)).as("a delayed message").isBetween(50L, 61L);
    q.receive("ahead", 1); // leased for 30 s: it becomes visible again before the delayed one
    assertThat(q.scalarLong(next)).as("a lease running out").isBetween(20L, 31L);
  }

  @Test
  void createIsIdempotentAndConflictsOnOtherSettings() throws SQLException {
    assertThat(q.create("orders", false, 30, null)).isTrue();
    assertThat(q.create("orders", false, 30, null)).isFalse();
    assertThat(sqlState(() -> q.create("orders", true, 30, null))).isEqualTo("42710");
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT queue_name, fifo FROM queue.list_queues()")) {
      assertThat(rs.next()).isTrue();
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "a\";drop table x;--",
        "Upper",
        "ünïcode",
        "-leading-dash",
        "has space",
        "",
        "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghi" // 49
      })
  void hostileNamesAreRejectedAndCreateNothing(String name) throws SQLException {
    long before = tableCount();
    assertThat(sqlState(() -> q.create(name, false, 30, null))).isEqualTo("22023");
    assertThat(sqlState(() -> q.send(name, "{}"))).isEqualTo("22023");
    assertThat(tableCount()).isEqualTo(before);
  }

  @Test
  void aFortyEightCharacterNameIsAccepted() throws SQLException {
    String name = "abcdefghijabcdefghijabcdefghijabcdefghij-_abcdef";
    assertThat(name).hasSize(48);
    assertThat(q.create(name, true, 30, null)).isTrue();
    long id = q.send(name, "{\"x\":1}", null, 0, "g");
    assertThat(q.receive(name, 1)).extracting(QueueSql.Msg::id).containsExactly(id);
  }

  @Test
  void unknownQueuesAndBadArgumentsAreClearErrors() throws SQLException {
    assertThat(sqlState(() -> q.send("nope", "{}"))).isEqualTo("P0002");
    assertThat(sqlState(() -> q.receive("nope", 1))).isEqualTo("P0002");
    q.create("args", false, 30, null);
    assertThat(sqlState(() -> q.send("args", "{}", null, -1, null))).isEqualTo("22023");
    assertThat(sqlState(() -> q.send("args", "{}", "[1]", 0, null))).isEqualTo("22023");
    assertThat(sqlState(() -> q.send("args", null, null, 0, null))).isEqualTo("22023");
    assertThat(sqlState(() -> q.receive("args", 0))).isEqualTo("22023");
    assertThat(sqlState(() -> q.receive("args", 1, -5, null, null))).isEqualTo("22023");
    assertThat(sqlState(() -> q.create("bad-vt", false, -1, null))).isEqualTo("22023");
    assertThat(sqlState(() -> q.create("bad-max", false, 30, 0))).isEqualTo("22023");
    assertThatThrownBy(() -> q.receiveFifo("args", 1, null))
        .hasMessageContaining("is not a FIFO queue");
    assertThat(q.scalarLong("SELECT count(*) FROM queue.q_args")).isZero();
  }

  @Test
  void sendReceiveDeleteRoundTrip() throws SQLException {
    q.create("plain", false, 30, null);
    long a = q.send("plain", "{\"n\":1}", "{\"trace\":\"t1\"}", 0, null);
    long b = q.send("plain", "{\"n\":2}");
    List<QueueSql.Msg> got = q.receive("plain", 10);
    assertThat(got).extracting(QueueSql.Msg::id).containsExactly(a, b);
    assertThat(got.get(0).readCount()).isEqualTo(1);
    assertThat(got.get(0).headers()).isEqualTo("{\"trace\": \"t1\"}");
    assertThat(q.receive("plain", 10)).isEmpty();
    assertThat(q.delete("plain", a)).isTrue();
    assertThat(q.delete("plain", a)).isFalse();
    assertThat(q.deleteMany("plain", b, 999L)).containsExactly(true, false);
    assertThat(q.scalarLong("SELECT count(*) FROM queue.q_plain")).isZero();
  }

  @Test
  void visibilityExpiresAndTheMessageComesBackWithAHigherReadCount() throws SQLException {
    q.create("vis", false, 30, null);
    long id = q.send("vis", "{}");
    Instant now = Instant.now();
    assertThat(q.receive("vis", 1, 10, null, now)).hasSize(1);
    assertThat(q.receive("vis", 1, 10, null, now.plusSeconds(5))).isEmpty();
    List<QueueSql.Msg> again = q.receive("vis", 1, 10, null, now.plusSeconds(11));
    assertThat(again).extracting(QueueSql.Msg::id).containsExactly(id);
    assertThat(again.get(0).readCount()).isEqualTo(2);
    assertThat(q.scalarLong("SELECT queue.read_ct('vis', ?::bigint)", id)).isEqualTo(2);
  }

  @Test
  void changeVisibilityMakesAMessageVisibleAgainAtOnce() throws SQLException {
    q.create("chvis", false, 300, null);
    long id = q.send("chvis", "{}");
    assertThat(q.receive("chvis", 1)).hasSize(1);
    assertThat(q.receive("chvis", 1)).isEmpty();
    try (PreparedStatement ps =
        c.prepareStatement("SELECT queue.change_visibility('chvis', ?::bigint, 0)")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getTimestamp(1)).isNotNull();
      }
    }
    assertThat(q.receive("chvis", 1)).extracting(QueueSql.Msg::id).containsExactly(id);
    assertThat(q.scalarLong("SELECT count(*) FROM queue.change_visibility('chvis', 12345, 0)"))
        .isEqualTo(1); // one row: null, the message does not exist
  }

  @Test
  void delayedMessagesAppearWhenDue() throws SQLException {
    q.create("delay", false, 30, null);
    long id = q.send("delay", "{}", null, 60, null);
    assertThat(q.receive("delay", 1)).isEmpty();
    assertThat(q.receive("delay", 1, null, null, Instant.now().plusSeconds(61)))
        .extracting(QueueSql.Msg::id)
        .containsExactly(id);
  }

  @Test
  void conditionalReceiveReturnsOnlyMatchingBodies() throws SQLException {
    q.create("cond", false, 30, null);
    q.send("cond", "{\"kind\":\"a\",\"n\":1}");
    long b = q.send("cond", "{\"kind\":\"b\",\"n\":2,\"extra\":true}");
    assertThat(q.receive("cond", 10, null, "{\"kind\":\"b\"}", null))
        .extracting(QueueSql.Msg::id)
        .containsExactly(b);
  }

  @Test
  void deadLetterAfterMaxReceivesAndRedrive() throws SQLException {
    q.create("dlq", true, 10, 2);
    long first = q.send("dlq", "{\"n\":1}", null, 0, "g");
    long second = q.send("dlq", "{\"n\":2}", null, 0, "g");
    Instant t = Instant.now();
    assertThat(q.receive("dlq", 5, null, null, t)).extracting(QueueSql.Msg::id).contains(first);
    assertThat(q.receive("dlq", 5, null, null, t.plusSeconds(11))).hasSize(1);
    // Third receive: first was received twice already, so it goes to the dead letters
    // and the group's next message takes its place as head.
    assertThat(q.receive("dlq", 5, null, null, t.plusSeconds(22))).isEmpty();
    assertThat(q.scalarLong("SELECT count(*) FROM queue.list_dead_letters('dlq')")).isEqualTo(1);
    assertThat(q.receive("dlq", 5, null, null, t.plusSeconds(23)))
        .extracting(QueueSql.Msg::id)
        .containsExactly(second);
    assertThat(q.scalarLong("SELECT dead_lettered FROM queue.queue_metrics('dlq')")).isEqualTo(1);

    assertThat(q.scalarLong("SELECT queue.redrive_dead_letters('dlq')")).isEqualTo(1);
    assertThat(q.scalarLong("SELECT count(*) FROM queue.list_dead_letters('dlq')")).isZero();
    q.delete("dlq", second);
    List<QueueSql.Msg> back = q.receive("dlq", 5);
    assertThat(back).hasSize(1);
    assertThat(back.get(0).body()).isEqualTo("{\"n\": 1}");
    assertThat(back.get(0).readCount()).isEqualTo(1);
  }

  @Test
  void sendBatchIsAllOrNothing() throws SQLException {
    q.create("batch", true, 30, null);
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT * FROM queue.send_batch('batch', '[{\"body\":1,\"groupId\":\"a\"},"
                    + "{\"body\":2,\"groupId\":\"a\",\"delaySeconds\":0},{\"body\":{\"x\":3}}]')")) {
      int n = 0;
      while (rs.next()) {
        n++;
      }
      assertThat(n).isEqualTo(3);
    }
    String state =
        sqlState(
            () -> {
              try (Statement s = c.createStatement()) {
                s.executeQuery(
                    "SELECT * FROM queue.send_batch('batch', '[{\"body\":1},{\"nobody\":2}]')");
              }
            });
    assertThat(state).isEqualTo("22023");
    assertThat(q.scalarLong("SELECT count(*) FROM queue.q_batch")).isEqualTo(3);
  }

  @Test
  void purgeAndDrop() throws SQLException {
    q.create("gone", false, 30, null);
    q.send("gone", "{}");
    q.send("gone", "{}");
    assertThat(q.scalarLong("SELECT queue.purge_queue('gone')")).isEqualTo(2);
    assertThat(q.scalarLong("SELECT count(*) FROM queue.q_gone")).isZero();
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT queue.drop_queue('gone'), queue.drop_queue('gone')")) {
      rs.next();
      assertThat(rs.getBoolean(1)).isTrue();
      assertThat(rs.getBoolean(2)).isFalse();
    }
    assertThat(q.scalarLong("SELECT count(*) FROM pg_tables WHERE tablename = 'q_gone'")).isZero();
  }

  @Test
  void metricsCountEachState() throws SQLException {
    q.create("metrics", false, 30, null);
    q.send("metrics", "{}");
    q.send("metrics", "{}");
    q.send("metrics", "{}", null, 600, null);
    q.receive("metrics", 1);
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT * FROM queue.queue_metrics('metrics')")) {
      rs.next();
      assertThat(rs.getLong("depth")).isEqualTo(3);
      assertThat(rs.getLong("visible")).isEqualTo(1);
      assertThat(rs.getLong("in_flight")).isEqualTo(1);
      assertThat(rs.getLong("delayed")).isEqualTo(1);
      assertThat(rs.getDouble("oldest_age_seconds")).isGreaterThanOrEqualTo(0);
      assertThat(rs.getLong("dead_lettered")).isZero();
    }
    assertThat(q.scalarLong("SELECT count(*) FROM queue.all_queue_metrics()")).isPositive();
  }

  @Test
  void largeBodiesRoundTrip() throws SQLException {
    q.create("big", false, 30, null);
    for (int size : new int[] {64 * 1024, 1024 * 1024}) {
      String payload = "x".repeat(size);
      String body = "{\"data\":\"" + payload + "\"}";
      long id = q.send("big", body);
      List<QueueSql.Msg> got = q.receive("big", 1);
      assertThat(got).extracting(QueueSql.Msg::id).containsExactly(id);
      assertThat(got.get(0).body()).isEqualTo("{\"data\": \"" + payload + "\"}");
      q.delete("big", id);
    }
  }
}
