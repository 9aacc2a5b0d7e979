package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;

/** The server answered with an error status; its problem+json title and detail say why. */
final class ServerAnswered extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;

  ServerAnswered(int status, String message) {
    super(message);
    this.status = status;
  }

  /** From an error answer: {@code 404 Not Found: queue "nope" does not exist}. */
  static ServerAnswered from(int status, String body) {
    JsonNode problem = Json.parse(body);
    String title = problem.path("title").asText("");
    String detail = problem.path("detail").asText("");
    StringBuilder line = new StringBuilder().append(status);
    if (!title.isEmpty()) {
      line.append(' ').append(title);
    }
    if (!detail.isEmpty()) {
      line.append(": ").append(detail);
    } else if (title.isEmpty() && !body.isBlank()) {
      line.append(": ").append(body.strip());
    }
    return new ServerAnswered(status, line.toString().replaceAll("\\s*\\R\\s*", " "));
  }

  int status() {
    return status;
  }

  /** The exit code scripts can rely on for this status. */
  int exitCode() {
    return switch (status) {
      case 404 -> ExitCodes.NOT_FOUND;
      case 409 -> ExitCodes.CONFLICT;
      case 401, 403 -> ExitCodes.UNAUTHORIZED;
      default -> status >= 500 ? ExitCodes.UNREACHABLE : ExitCodes.SERVER_ERROR;
    };
  }
}
