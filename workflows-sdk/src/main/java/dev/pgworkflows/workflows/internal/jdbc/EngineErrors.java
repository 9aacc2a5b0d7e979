package dev.pgworkflows.workflows.internal.jdbc;

import dev.pgworkflows.engine.internal.store.DatabaseException;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import java.util.function.Supplier;

/**
 * The engine's refusals as a worker or client over HTTP would have had them from a server: a
 * refusal an {@link ApiException} with the status the server answers, a database out of reach (or
 * read-only, or busy past its statement timeout) a {@link ServerUnavailableException}.
 */
final class EngineErrors {
  /** PostgreSQL's insufficient_privilege. */
  private static final String NO_PRIVILEGE = "42501";

  private EngineErrors() {}

  static <T> T call(Supplier<T> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      throw translate(e);
    }
  }

  static RuntimeException translate(Throwable e) {
    if (e instanceof dev.pgworkflows.engine.internal.checks.ApiException refused) {
      return new ApiException(refused.status(), refused.getMessage());
    }
    if (e instanceof DatabaseException db) {
      if (NO_PRIVILEGE.equals(db.sqlState())) {
        return new ApiException(
            403,
            "the database role lacks a grant this call needs ("
                + db.serverMessage()
                + "); grant it pgworkflows_worker (to serve workflows) or pgworkflows_client (to"
                + " start, signal and read runs), see sql/roles.sql");
      }
      int status = db.status();
      if (status == 503) {
        return new ServerUnavailableException(
            "the database is unavailable: " + db.getMessage(), db);
      }
      return new ApiException(status, db.serverMessage());
    }
    if (e instanceof RuntimeException r) {
      return r;
    }
    return new IllegalStateException(e);
  }
}
