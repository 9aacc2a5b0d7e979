package dev.pgworkflows.workflows.internal.sql;

import dev.pgworkflows.protocol.SqlStates;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.WorkflowException;
import java.sql.SQLException;

/**
 * SQLStates of the queue functions turned into the SDK's exceptions by their meaning ({@link
 * SqlStates}), as the server's routes answer them: its 400s as {@link IllegalArgumentException},
 * its 404s and 409s as {@link ApiException} with that status, anything else as {@link
 * WorkflowException}. Each keeps the {@link SQLException} as its cause, whose SQLState tells a
 * retryable failure (40001, 40P01, 08xxx) from others.
 */
final class SqlErrors {
  private SqlErrors() {}

  static RuntimeException translate(String what, SQLException e) {
    String message = firstLine(e.getMessage());
    return switch (SqlStates.of(e.getSQLState())) {
      case BAD_INPUT -> withCause(new IllegalArgumentException(message), e);
      case NOT_FOUND -> withCause(new ApiException(404, message), e);
      case CONFLICT -> withCause(new ApiException(409, message), e);
      case SCHEMA -> {
        // A function or schema missing although the version matched: forget what was checked.
        SchemaVersion.forget();
        yield new WorkflowException(
            what + " failed: the queue schema lacks what this SDK calls (" + message + ")", e);
      }
      case UNAVAILABLE, OTHER -> new WorkflowException(what + " failed: " + message, e);
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
