package dev.pgworkflows.workflows.internal.sql;

import dev.pgworkflows.workflows.WorkflowException;
import java.sql.SQLException;

/**
 * SQLStates of the queue functions turned into the SDK's exceptions. A refused call has raised an
 * error in the caller's transaction, which PostgreSQL then aborts: the caller rolls it back.
 */
final class SqlErrors {
  private SqlErrors() {}

  static RuntimeException translate(String what, SQLException e) {
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    String message = firstLine(e.getMessage());
    return switch (state) {
      // The functions' own checks (a bad field, named in the message) and malformed values.
      case "22023", "22P02", "22007", "22008", "23514" -> new IllegalArgumentException(message, e);
      case "42883", "42P01", "3F000" -> {
        // A function or table missing although the version matched: forget what was checked.
        SchemaVersion.forget();
        yield new WorkflowException(
            what + " failed: the queue schema lacks what this SDK calls (" + message + ")", e);
      }
      default -> new WorkflowException(what + " failed: " + message, e);
    };
  }

  /** The server's words without the driver's prefix and its context lines. */
  private static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int nl = message.indexOf('\n');
    String line = nl < 0 ? message : message.substring(0, nl);
    return line.startsWith("ERROR: ") ? line.substring("ERROR: ".length()) : line;
  }
}
