package dev.pgworkflows.engine.internal.checks;

/** A request that cannot be served, with the status and words the client will see. */
public final class ApiException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;
  private final String field;

  public ApiException(int status, String message) {
    this(status, message, null);
  }

  public ApiException(int status, String message, String field) {
    super(message);
    this.status = status;
    this.field = field;
  }

  public static ApiException badRequest(String field, String message) {
    return new ApiException(400, message, field);
  }

  public static ApiException notFound(String message) {
    return new ApiException(404, message);
  }

  public static ApiException conflict(String message) {
    return new ApiException(409, message);
  }

  public int status() {
    return status;
  }

  /** The request field at fault, for 400s; null otherwise. */
  public String field() {
    return field;
  }
}
