package dev.pgworkflows.workflows;

/**
 * The database a {@link WorkflowSql} call was given has no {@code queue} schema, or one at another
 * version than this SDK was built for. Nothing was written: the check runs before any call.
 */
public final class QueueSchemaException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final int expectedVersion;
  private final int foundVersion;

  public QueueSchemaException(String message, int expectedVersion, int foundVersion) {
    super(message);
    this.expectedVersion = expectedVersion;
    this.foundVersion = foundVersion;
  }

  /** The schema version this SDK was built for. */
  public int expectedVersion() {
    return expectedVersion;
  }

  /** The version the database holds; 0 when the schema is not installed. */
  public int foundVersion() {
    return foundVersion;
  }
}
