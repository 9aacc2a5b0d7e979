package dev.pgworkflows.workflows.internal.http;

import dev.pgworkflows.workflows.WorkflowException;

/**
 * A streamed answer's first line did not arrive in time, though the server writes it at once:
 * something on the way holds the answer back (a buffering proxy), so streams will not serve here.
 */
public final class StreamHeldException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  public StreamHeldException(String message, Throwable cause) {
    super(message, cause);
  }
}
