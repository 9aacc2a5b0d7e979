package dev.pgworkflows.workflows;

/**
 * An update was not answered within the caller's timeout. It stays pending and is answered when the
 * run next handles its updates; a later call with the same idempotency key ({@link
 * UpdateOptions.Builder#idempotencyKey}) waits for that answer without sending it again.
 */
public final class UpdatePendingException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final long updateId;
  private final String idempotencyKey;

  public UpdatePendingException(String update, long updateId, String idempotencyKey) {
    super("update " + update + " (" + updateId + ") is not answered yet");
    this.updateId = updateId;
    this.idempotencyKey = idempotencyKey;
  }

  /** The update's id. */
  public long updateId() {
    return updateId;
  }

  /** The idempotency key it was sent with. */
  public String idempotencyKey() {
    return idempotencyKey;
  }
}
