package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.protocol.SqlStates;
import java.sql.SQLException;

/**
 * An SQLException on its way to the HTTP edge, which answers with its {@link #status()}; the engine
 * uses that status too, to tell a refused item of a batch (4xx) from a failure of the whole (5xx).
 */
public final class DatabaseException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public DatabaseException(SQLException cause) {
    super(cause.getMessage(), cause);
  }

  public String sqlState() {
    return ((SQLException) getCause()).getSQLState();
  }

  /** The server's message without pgjdbc's "ERROR: " prefix and position suffix. */
  public String serverMessage() {
    SQLException e = (SQLException) getCause();
    if (e instanceof org.postgresql.util.PSQLException p && p.getServerErrorMessage() != null) {
      return p.getServerErrorMessage().getMessage();
    }
    return e.getMessage();
  }

  /**
   * The status for the SQLSTATE ({@link SqlStates}): 4xx for bad input, 503 when the database
   * cannot serve for now, 500 for anything else. A connection the driver lost is 503 whatever its
   * state.
   */
  public int status() {
    Throwable cause = getCause();
    if (cause instanceof java.sql.SQLTransientConnectionException
        || cause instanceof java.sql.SQLNonTransientConnectionException
        || cause instanceof java.sql.SQLRecoverableException) {
      return 503;
    }
    return SqlStates.of(sqlState()).status();
  }
}
