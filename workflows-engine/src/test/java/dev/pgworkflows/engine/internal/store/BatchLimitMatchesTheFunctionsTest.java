package dev.pgworkflows.engine.internal.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.protocol.Limits;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The functions that take a batch of starts or completions take as many items as the protocol's
 * batch limit ({@link Limits#MAX_BATCH}) and refuse one more with 22023, so a batch the server or
 * the JDBC path accepts is one the database accepts.
 */
class BatchLimitMatchesTheFunctionsTest {
  private static TestDatabase db;

  @BeforeAll
  static void migrate() {
    db = TestDatabase.fresh();
  }

  @Test
  void startBatchesTakeTheProtocolsLimitAndNoMore() throws SQLException {
    for (String function : new String[] {"workflow_start_batch", "workflow_start_each"}) {
      assertThat(items(function, Limits.MAX_BATCH)).as(function).isEqualTo(Limits.MAX_BATCH);
      assertThatThrownBy(() -> items(function, Limits.MAX_BATCH + 1))
          .as(function)
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("22023"))
          .hasMessageContaining("batch size");
    }
  }

  @Test
  void completionBatchesRefuseOneMoreThanTheProtocolsLimit() throws SQLException {
    try (Connection c = db.connect()) {
      c.createStatement().execute("SELECT queue.workflow_start('limits', '1'::jsonb)");
    }
    assertThatThrownBy(() -> complete(Limits.MAX_BATCH + 1))
        .isInstanceOfSatisfying(
            SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("22023"))
        .hasMessageContaining("batch size");
  }

  private static int items(String function, int n) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM queue."
                    + function
                    + "('limits', (SELECT jsonb_agg(jsonb_build_object('input', g))"
                    + " FROM generate_series(1, ?) g))")) {
      ps.setInt(1, n);
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static void complete(int n) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM queue.workflow_complete_batch('limits',"
                    + " (SELECT jsonb_agg(jsonb_build_object('msgId', g, 'receipt', g))"
                    + " FROM generate_series(1, ?) g))")) {
      ps.setInt(1, n);
      ps.executeQuery().close();
    }
  }
}
