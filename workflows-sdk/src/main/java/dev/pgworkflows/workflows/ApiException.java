package dev.pgworkflows.workflows;

/** The server refused a request; {@link #status()} and the server's own words say why. */
public final class ApiException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final int status;

  public ApiException(int status, String message) {
    super(message);
    this.status = status;
  }

  public int status() {
    return status;
  }
}
