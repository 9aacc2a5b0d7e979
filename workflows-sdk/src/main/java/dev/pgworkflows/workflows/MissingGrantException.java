package dev.pgworkflows.workflows;

/**
 * The database login may not call the functions this side needs: it lacks the role of {@code
 * sql/roles.sql} that grants them ({@code pgworkflows_worker} to serve workflows, {@code
 * pgworkflows_client} to start, signal and read runs). Nothing was written: the check runs before
 * any call.
 */
public final class MissingGrantException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final String missingRole;

  public MissingGrantException(String message, String missingRole) {
    super(message);
    this.missingRole = missingRole;
  }

  /** The role to grant the login. */
  public String missingRole() {
    return missingRole;
  }
}
