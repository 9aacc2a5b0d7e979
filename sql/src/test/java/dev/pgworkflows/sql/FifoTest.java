package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** FIFO groups with two consumers on separate connections, interleaving. */
class FifoTest {
  private static TestDatabase db;
  private static Connection c1;
  private static Connection c2;
  private static QueueSql a;
  private static QueueSql b;

  @BeforeAll
  static void connect() throws SQLException {
    db = TestDatabase.fresh();
    c1 = db.connect();
    c2 = db.connect();
    a = new QueueSql(c1);
    b = new QueueSql(c2);
  }

  @AfterAll
  static void close() throws SQLException {
    c1.close();
    c2.close();
  }

  @Test
  void aGroupWithAMessageInFlightYieldsNothingUntilItIsDeleted() throws SQLException {
    a.create("fifo1", true, 30, null);
    long g1m1 = a.send("fifo1", "{\"g\":1,\"n\":1}", null, 0, "g1");
    long g1m2 = a.send("fifo1", "{\"g\":1,\"n\":2}", null, 0, "g1");
    long g2m1 = a.send("fifo1", "{\"g\":2,\"n\":1}", null, 0, "g2");

    // Consumer A takes one head per group; consumer B gets nothing: both groups are in flight.
    assertThat(a.receiveFifo("fifo1", 10, null))
        .extracting(QueueSql.Msg::id)
        .containsExactly(g1m1, g2m1);
    assertThat(b.receiveFifo("fifo1", 10, null)).isEmpty();

    // Acking g1's head lets g1's next message through, to whichever consumer asks.
    assertThat(a.delete("fifo1", g1m1)).isTrue();
    assertThat(b.receiveFifo("fifo1", 10, null)).extracting(QueueSql.Msg::id).containsExactly(g1m2);
    assertThat(a.receiveFifo("fifo1", 10, null)).isEmpty();
  }

  @Test
  void anExpiredHeadIsRedeliveredBeforeTheRestOfItsGroup() throws SQLException {
    a.create("fifo2", true, 10, null);
    long m1 = a.send("fifo2", "{\"n\":1}", null, 0, "g");
    a.send("fifo2", "{\"n\":2}", null, 0, "g");
    Instant t = Instant.now();
    assertThat(a.receiveFifo("fifo2", 10, t)).extracting(QueueSql.Msg::id).containsExactly(m1);
    assertThat(b.receiveFifo("fifo2", 10, t.plusSeconds(5))).isEmpty();
    List<QueueSql.Msg> again = b.receiveFifo("fifo2", 10, t.plusSeconds(11));
    assertThat(again).extracting(QueueSql.Msg::id).containsExactly(m1);
    assertThat(again.get(0).readCount()).isEqualTo(2);
  }

  @Test
  void orderWithinEachGroupHoldsAcrossManyMessagesAndTwoConsumers() throws SQLException {
    a.create("fifo3", true, 30, null);
    int groups = 5;
    int perGroup = 20;
    for (int i = 0; i < perGroup; i++) {
      for (int g = 0; g < groups; g++) {
        a.send("fifo3", "{\"g\":" + g + ",\"n\":" + i + "}", null, 0, "g" + g);
      }
    }
    List<List<Integer>> seen = new ArrayList<>();
    for (int g = 0; g < groups; g++) {
      seen.add(new ArrayList<>());
    }
    QueueSql[] consumers = {a, b};
    int turn = 0;
    int received = 0;
    while (received < groups * perGroup) {
      QueueSql consumer = consumers[turn++ % 2];
      for (QueueSql.Msg m : consumer.receiveFifo("fifo3", 3, null)) {
        int g = Integer.parseInt(m.groupId().substring(1));
        int n = Integer.parseInt(m.body().replaceAll(".*\"n\": (\\d+).*", "$1"));
        seen.get(g).add(n);
        consumer.delete("fifo3", m.id());
        received++;
      }
    }
    for (List<Integer> s : seen) {
      assertThat(s).isSorted().hasSize(perGroup);
    }
  }

  @Test
  void aSendRacingTheHeadsDeleteIsNeverStranded() throws Exception {
    a.create("fifo4", true, 30, null);
    for (int round = 0; round < 50; round++) {
      long head = a.send("fifo4", "{}", null, 0, "g");
      assertThat(a.receiveFifo("fifo4", 1, null)).hasSize(1);
      c1.setAutoCommit(false);
      c2.setAutoCommit(false);
      try {
        a.delete("fifo4", head);
        Thread sender =
            new Thread(
                () -> {
                  try {
                    b.send("fifo4", "{}", null, 0, "g");
                    c2.commit();
                  } catch (SQLException e) {
                    throw new IllegalStateException(e);
                  }
                });
        sender.start();
        Thread.sleep(round % 3);
        c1.commit();
        sender.join();
      } finally {
        c1.setAutoCommit(true);
        c2.setAutoCommit(true);
      }
      List<QueueSql.Msg> next = a.receiveFifo("fifo4", 1, null);
      assertThat(next).as("round %d", round).hasSize(1);
      a.delete("fifo4", next.get(0).id());
    }
  }

  @Test
  void delayedHeadHoldsItsGroup() throws SQLException {
    a.create("fifo5", true, 30, null);
    long delayed = a.send("fifo5", "{}", null, 60, "g");
    a.send("fifo5", "{}", null, 0, "g");
    assertThat(a.receiveFifo("fifo5", 10, null)).isEmpty();
    assertThat(a.receiveFifo("fifo5", 10, Instant.now().plusSeconds(61)))
        .extracting(QueueSql.Msg::id)
        .containsExactly(delayed);
  }

  @Test
  void messagesWithoutAGroupAreIndependent() throws SQLException {
    a.create("fifo6", true, 30, null);
    a.send("fifo6", "{}");
    a.send("fifo6", "{}");
    assertThat(a.receiveFifo("fifo6", 10, null)).hasSize(2);
  }

  @Test
  void batchDeleteOfAHeadAndItsSuccessorPromotesTheThird() throws SQLException {
    a.create("fifo7", true, 30, null);
    long m1 = a.send("fifo7", "{}", null, 0, "g");
    long m2 = a.send("fifo7", "{}", null, 0, "g");
    long m3 = a.send("fifo7", "{}", null, 0, "g");
    assertThat(a.deleteMany("fifo7", m1, m2)).containsExactly(true, true);
    assertThat(a.receiveFifo("fifo7", 10, null)).extracting(QueueSql.Msg::id).containsExactly(m3);
    try (Statement s = c1.createStatement()) {
      s.execute("SELECT 1");
    }
  }
}
