package dev.pgworkflows.testing;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/** What a LISTEN connection on the queues' wake-up channel hears. */
public final class Notifications {
  private final PGConnection pg;

  private Notifications(PGConnection pg) {
    this.pg = pg;
  }

  /** Listens on {@code c} for wake-ups, and forgets anything heard before. */
  public static Notifications listen(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("LISTEN queue_wakeup");
    }
    Notifications n = new Notifications(c.unwrap(PGConnection.class));
    n.heard();
    return n;
  }

  /** The queues named by the wake-ups heard since the last call, waiting a short while for more. */
  public List<String> heard() throws SQLException {
    List<String> out = new ArrayList<>();
    long deadline = System.currentTimeMillis() + 300;
    while (System.currentTimeMillis() < deadline) {
      PGNotification[] batch = pg.getNotifications(50);
      if (batch != null) {
        for (PGNotification n : batch) {
          out.add(n.getParameter());
        }
      }
    }
    return out;
  }
}
