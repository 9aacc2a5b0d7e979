package dev.pgworkflows.server.internal.db;

import java.sql.SQLException;

/** An SQLException on its way to the HTTP edge, which maps its SQLSTATE to a status. */
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
}
