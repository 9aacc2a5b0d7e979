package dev.pgworkflows.engine.internal.host;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Ends the database session of a connection the engine kept for itself. A pool's {@code close()}
 * would keep the session for the next borrower, and with it what the engine left on it (a held
 * advisory lock, a LISTEN); aborting ends it, and the pool opens a fresh one in its place.
 */
public final class Sessions {
  private Sessions() {}

  /**
   * Names the session in {@code pg_stat_activity} (a pool's connection keeps its own name until
   * then; the session is {@linkplain #end ended} after, never handed back).
   */
  public static void name(Connection c, String applicationName) throws SQLException {
    try (java.sql.Statement s = c.createStatement()) {
      s.execute("SET application_name = '" + applicationName.replace("'", "''") + "'");
    }
  }

  public static void end(Connection c) {
    if (c == null) {
      return;
    }
    try {
      c.abort(Runnable::run);
    } catch (SQLException | RuntimeException e) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // gone either way
      }
    }
  }
}
