package dev.pgworkflows.engine.internal.store;

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
   * The status for an SQLSTATE raised by the SQL functions: 4xx for bad input, 503 when the
   * database is unreachable, read-only (a standby, during a failover), out of a resource (disk,
   * memory, connections), cancelled a statement at its timeout or rolled the transaction back to
   * break a deadlock, 500 for anything else.
   */
  public int status() {
    String state = sqlState() == null ? "" : sqlState();
    int status =
        switch (state) {
          case "22023",
                  "22P02",
                  "22P05",
                  "22003",
                  "22001",
                  "22004",
                  "22007",
                  "22008",
                  "2201B",
                  "54000" ->
              400;
          case "P0002", "42P01" -> 404;
          // WF001: a workflow's queue __wf_<name> refuses all but sends (the engine owns it);
          // WF002: a parent run that is not running starts no children;
          // WF003: a run in the wrong state for an operator's action (pause, restart).
          case "42710", "23505", "WF001", "WF002", "WF003" -> 409;
          default -> 0;
        };
    if (status != 0) {
      return status;
    }
    Throwable cause = getCause();
    // 40xxx: a deadlock or serialization failure rolled the transaction back; trying again works.
    // 57014: the statement ran past WORKFLOWS_DB_STATEMENT_TIMEOUT_MS (a database too busy).
    // 25006: a read-only transaction, as on a standby that a connection reached during a
    // failover; the next connection finds the new primary.
    // 53xxx: the database lacks a resource for now: its disk is full (53100), its memory (53200),
    // its connection slots (53300).
    if (state.startsWith("08")
        || state.equals("57014")
        || state.equals("25006")
        || state.startsWith("40")
        || state.startsWith("57P")
        || state.startsWith("53")
        || cause instanceof java.sql.SQLTransientConnectionException
        || cause instanceof java.sql.SQLNonTransientConnectionException
        || cause instanceof java.sql.SQLRecoverableException) {
      return 503;
    }
    return 500;
  }
}
