package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

class WakeupTest {

  @Test
  void listenersHearEachQueueOnceAfterCommitAndNeverForDelayedMessages() throws SQLException {
    TestDatabase db = TestDatabase.fresh();
    try (Connection listener = db.connect();
        Connection sender = db.connect()) {
      QueueSql q = new QueueSql(sender);
      q.create("wa", false, 30, null);
      q.create("wb", true, 30, null);
      q.create("wc", false, 30, null);
      try (Statement s = listener.createStatement()) {
        s.execute("LISTEN queue_wakeup");
      }
      PGConnection pg = listener.unwrap(PGConnection.class);
      drain(pg, 200);

      sender.setAutoCommit(false);
      q.send("wa", "{\"secret\":1}");
      q.send("wa", "{}");
      q.send("wa", "{}");
      q.send("wb", "{}", null, 0, "g");
      q.send("wb", "{}", null, 0, "g"); // not a head: nothing new is visible
      q.send("wc", "{}", null, 30, null); // delayed: nothing is visible now
      assertThat(drain(pg, 300)).as("nothing before commit").isEmpty();
      sender.commit();

      List<PGNotification> heard = drain(pg, 1000);
      assertThat(heard).extracting(PGNotification::getName).containsOnly("queue_wakeup");
      assertThat(heard).extracting(PGNotification::getParameter).containsExactly("wa", "wb");

      sender.rollback();
      q.send("wc", "{}");
      sender.rollback();
      assertThat(drain(pg, 300)).as("nothing after rollback").isEmpty();
    }
  }

  private static List<PGNotification> drain(PGConnection pg, int waitMillis) throws SQLException {
    List<PGNotification> out = new ArrayList<>();
    long deadline = System.currentTimeMillis() + waitMillis;
    while (System.currentTimeMillis() < deadline) {
      PGNotification[] batch = pg.getNotifications(50);
      if (batch != null) {
        out.addAll(List.of(batch));
      }
    }
    return out;
  }
}
