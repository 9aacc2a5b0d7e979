package dev.pgworkflows.engine.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * What each kind of database failure answers: bad input 4xx; an outage, or a transaction rolled
 * back to break a deadlock, 503 (a caller may try again); anything else 500.
 */
class DatabaseExceptionStatusTest {

  private static int status(String sqlState) {
    return new DatabaseException(new SQLException("x", sqlState)).status();
  }

  @Test
  void aDeadlockOrSerializationFailureIsWorthTryingAgain() {
    assertThat(status("40P01")).isEqualTo(503);
    assertThat(status("40001")).isEqualTo(503);
  }

  @Test
  void aReadOnlyTransactionDuringAFailoverIsWorthTryingAgain() {
    assertThat(status("25006")).isEqualTo(503);
  }

  @Test
  void badInputMissingThingsAndConflictsAreTheCallersAndTheRestIsOurs() {
    assertThat(status("22023")).isEqualTo(400);
    assertThat(status("P0002")).isEqualTo(404);
    assertThat(status("WF002")).isEqualTo(409);
    assertThat(status("08006")).isEqualTo(503);
    assertThat(status("XX000")).isEqualTo(500);
  }
}
