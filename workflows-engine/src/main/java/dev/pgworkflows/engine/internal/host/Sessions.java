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
