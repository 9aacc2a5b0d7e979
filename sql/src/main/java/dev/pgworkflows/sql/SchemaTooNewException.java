package dev.pgworkflows.sql;

/** The database was migrated by newer code than this; running against it could corrupt it. */
public final class SchemaTooNewException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int databaseVersion;
  private final int codeVersion;

  public SchemaTooNewException(int databaseVersion, int codeVersion) {
    super(
        "database schema is at version "
            + databaseVersion
            + ", newer than this code's version "
            + codeVersion
            + "; upgrade the server before pointing it at this database");
    this.databaseVersion = databaseVersion;
    this.codeVersion = codeVersion;
  }

  public int databaseVersion() {
    return databaseVersion;
  }

  public int codeVersion() {
    return codeVersion;
  }
}
