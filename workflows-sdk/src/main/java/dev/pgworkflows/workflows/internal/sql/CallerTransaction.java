package dev.pgworkflows.workflows.internal.sql;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;

/**
 * Runs a call in the caller's transaction so that a refused call leaves it usable: inside a
 * savepoint when a transaction is open (rolled back to on any failure, released on success), as is
 * with auto-commit on, where the call is its own transaction anyway.
 */
final class CallerTransaction {
  /** A call on the connection. */
  interface Call<T> {
    T run() throws SQLException;
  }

  private CallerTransaction() {}

  static <T> T call(Connection c, Call<T> call) throws SQLException {
    if (c.getAutoCommit()) {
      return call.run();
    }
    Savepoint sp = c.setSavepoint();
    T result;
    try {
      result = call.run();
    } catch (SQLException | RuntimeException e) {
      try {
        c.rollback(sp);
        c.releaseSavepoint(sp);
      } catch (SQLException undo) {
        e.addSuppressed(undo);
      }
      throw e;
    }
    c.releaseSavepoint(sp);
    return result;
  }

  /**
   * Refuses a debounced start outside READ COMMITTED: the debounce takes an advisory lock and then
   * reads the key's pending run, which a transaction holding an older snapshot would not see, so
   * two starts could each create a run.
   */
  static void requireReadCommitted(Connection c) throws SQLException {
    String level;
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_setting('transaction_isolation')")) {
      if (!rs.next()) {
        throw new SQLException("transaction_isolation answered no row");
      }
      level = rs.getString(1);
    }
    if (!"read committed".equals(level)) {
      throw new IllegalStateException(
          "a debounced start needs a READ COMMITTED transaction (its check of the pending run"
              + " must see runs committed since the transaction began), but this one is "
              + level.toUpperCase(java.util.Locale.ROOT));
    }
  }
}
