package dev.pgworkflows.workflows.internal.http;

import dev.pgworkflows.workflows.WorkflowException;

/** The server could not be reached, or said it could not serve; worth retrying. */
public final class ServerUnavailableException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  public ServerUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
