package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * What the stateful property tests share: time limits (jqwik has no per-property timeout) and
 * actions that call SQL.
 */
final class ModelRuns {
  /**
   * The wall-clock budget of one property: a try that starts later fails, so a slow or stuck run
   * ends the build with a message instead of eating it. Generous: the default tries take a
   * fraction.
   */
  static final Duration BUDGET = Duration.ofMinutes(10);

  private ModelRuns() {}

  /** No statement waits for a lock or runs for more than 10 s: a hang becomes a failure. */
  static void guard(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("SET statement_timeout = '10s'");
      s.execute("SET lock_timeout = '10s'");
    }
  }

  static void withinBudget(long startedNanos) {
    assertThat(Duration.ofNanos(System.nanoTime() - startedNanos))
        .as("wall-clock budget of this property")
        .isLessThan(BUDGET);
  }

  interface SqlAction<S> {
    void accept(S state) throws SQLException;
  }

  /** An action on the state whose SQL errors fail the step. */
  static <S> Consumer<S> sql(SqlAction<S> action) {
    return state -> {
      try {
        action.accept(state);
      } catch (SQLException e) {
        throw new IllegalStateException(e.getMessage() + " (SQLSTATE " + e.getSQLState() + ")", e);
      }
    };
  }
}
