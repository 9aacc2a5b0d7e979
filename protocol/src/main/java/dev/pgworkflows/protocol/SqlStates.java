package dev.pgworkflows.protocol;

/**
 * What an SQLSTATE raised by the queue's SQL functions (or by PostgreSQL under them) means to a
 * caller, in one place for both ends: the server answers it with {@link Failure#status()}, the
 * SDK's JDBC path throws the exception of the same meaning.
 */
public final class SqlStates {
  private SqlStates() {}

  /** The kinds of failure, each with the HTTP status the server answers it with. */
  public enum Failure {
    /** The caller's input: a bad field (named in the message), a value out of range or form. */
    BAD_INPUT(400),
    /** What the call names does not exist: a run, a queue, a schedule. */
    NOT_FOUND(404),
    /** The call conflicts with what exists or with the state it is in. */
    CONFLICT(409),
    /** A function or schema the caller expects is not in the database. */
    SCHEMA(500),
    /** The database cannot serve now but will: unreachable, read-only, out of a resource, busy. */
    UNAVAILABLE(503),
    /** Anything else: a fault to look into. */
    OTHER(500);

    private final int status;

    Failure(int status) {
      this.status = status;
    }

    public int status() {
      return status;
    }
  }

  /** The failure an SQLSTATE stands for; null or unknown states are {@link Failure#OTHER}. */
  public static Failure of(String sqlState) {
    String state = sqlState == null ? "" : sqlState;
    return switch (state) {
      // The functions' own checks (22023, naming the field) and malformed or oversized values;
      // 23514 is a row rule a field broke.
      case "22023",
              "22P02",
              "22P05",
              "22003",
              "22001",
              "22004",
              "22007",
              "22008",
              "2201B",
              "54000",
              "23514" ->
          Failure.BAD_INPUT;
      // P0002: no such run, queue or schedule; 42P01: a queue's table gone (dropped meanwhile).
      case "P0002", "42P01" -> Failure.NOT_FOUND;
      // WF001: a workflow's queue __wf_<name> refuses all but sends (the engine owns it);
      // WF002: a parent run that is not running starts no children;
      // WF003: a run in the wrong state for an operator's action (pause, restart).
      case "42710", "23505", "WF001", "WF002", "WF003" -> Failure.CONFLICT;
      case "42883", "3F000" -> Failure.SCHEMA;
      // 57014: a statement ran past its timeout (a database too busy); 25006: a read-only
      // transaction, as on a standby reached during a failover.
      case "57014", "25006" -> Failure.UNAVAILABLE;
      default -> unavailableClass(state) ? Failure.UNAVAILABLE : Failure.OTHER;
    };
  }

  /**
   * 08: the connection failed; 40: a deadlock or serialization failure rolled the transaction back
   * (trying again works); 53: the database lacks a resource for now (disk 53100, memory 53200,
   * connection slots 53300); 57P: the server is shutting down or cannot connect now.
   */
  private static boolean unavailableClass(String state) {
    return state.startsWith("08")
        || state.startsWith("40")
        || state.startsWith("53")
        || state.startsWith("57P");
  }
}
