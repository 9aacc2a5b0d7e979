package dev.pgworkflows.workflows.internal.sql;

import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.WorkflowException;
import java.sql.SQLException;

/**
 * SQLStates of the queue functions turned into the SDK's exceptions, as the server's routes answer
 * them: its 400s as {@link IllegalArgumentException}, its 404s and 409s as {@link ApiException}
 * with that status, anything else as {@link WorkflowException}. Each keeps the {@link SQLException}
 * as its cause, whose SQLState tells a retryable failure (40001, 40P01, 08xxx) from others.
 */
final class SqlErrors {
  private SqlErrors() {}

  static RuntimeException translate(String what, SQLException e) {
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    String message = firstLine(e.getMessage());
    return switch (state) {
      // The functions' own checks (a bad field, named in the message) and malformed values; 23514
      // is a row rule a bad field broke.
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
          withCause(new IllegalArgumentException(message), e);
      case "P0002" -> withCause(new ApiException(404, message), e);
      case "42710", "23505", "WF001", "WF002", "WF003" ->
          withCause(new ApiException(409, message), e);
      case "42883", "42P01", "3F000" -> {
        // A function or table missing although the version matched: forget what was checked.
        SchemaVersion.forget();
        yield new WorkflowException(
            what + " failed: the queue schema lacks what this SDK calls (" + message + ")", e);
      }
      default -> new WorkflowException(what + " failed: " + message, e);
    };
  }

  private static <T extends RuntimeException> T withCause(T exception, SQLException cause) {
    exception.initCause(cause);
    return exception;
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
