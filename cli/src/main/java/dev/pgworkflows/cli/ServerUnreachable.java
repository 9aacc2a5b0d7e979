package dev.pgworkflows.cli;

/** No answer: the server could not be reached, or the connection broke or timed out. */
final class ServerUnreachable extends RuntimeException {
  private static final long serialVersionUID = 1L;

  ServerUnreachable(String message, Throwable cause) {
    super(message, cause);
  }
}
