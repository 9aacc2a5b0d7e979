package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.engine.internal.db.ConnectionInfo;
import dev.pgworkflows.server.internal.db.Pool;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The pool's bounds on waiting for the database: a statement stuck behind a lock is cancelled at
 * {@code WORKFLOWS_DB_STATEMENT_TIMEOUT_MS} and answered 503, and settings that cannot work are
 * refused at start with the variable's name. (A database that stops answering altogether, which the
 * socket timeout bounds, is tried in the reliability suite's PostgresNetworkFaultsTest.)
 */
class DatabaseTimeoutsTest {

  @Test
  void aStatementStuckBehindALockIsCancelledAtTheTimeoutAndAnswered503() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (TestServer server =
            TestServer.start(
                db,
                Map.of(
                    "WORKFLOWS_DB_STATEMENT_TIMEOUT_MS", "1000",
                    "WORKFLOWS_DB_SOCKET_TIMEOUT_MS", "5000"));
        Connection locker = db.connect()) {
      Api api = server.api();
      assertThat(api.get("/v1/workflows/locked/runs/1").status()).isEqualTo(404);
      locker.setAutoCommit(false);
      try (Statement s = locker.createStatement()) {
        s.execute("LOCK TABLE queue.workflow_run IN ACCESS EXCLUSIVE MODE");
      }
      long t0 = System.nanoTime();
      Api.Response stuck = api.get("/v1/workflows/locked/runs/1");
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertThat(stuck.status()).isEqualTo(503);
      assertThat(stuck.isProblem()).isTrue();
      assertThat(stuck.json().get("detail").asText()).contains("retry");
      assertThat(ms).isBetween(900L, 4_000L);
      locker.rollback();
      assertThat(api.get("/v1/workflows/locked/runs/1").status()).isEqualTo(404);
    }
  }

  @Test
  void theStatementTimeoutHoldsBesideOptionsOfTheDatabaseUrl() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    String url =
        db.jdbcUrl() + (db.jdbcUrl().contains("?") ? "&" : "?") + "options=-c%20work_mem%3D5MB";
    ConnectionInfo info =
        ConnectionInfo.parse(url, Optional.of(db.user()), Optional.of(db.password()));
    try (HikariDataSource pool = Pool.open(info, 2, 1234, 5000);
        Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      assertThat(setting(s, "statement_timeout")).isEqualTo("1234ms");
      assertThat(setting(s, "work_mem")).isEqualTo("5MB");
    }
  }

  private static String setting(Statement s, String name) throws Exception {
    try (ResultSet rs = s.executeQuery("SHOW " + name)) {
      rs.next();
      return rs.getString(1);
    }
  }

  @Test
  void timeoutsThatCannotWorkAreRefusedNamingTheVariable() {
    assertThatThrownBy(() -> ServerConfig.from(Map.of("WORKFLOWS_DB_SOCKET_TIMEOUT_MS", "500")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("WORKFLOWS_DB_SOCKET_TIMEOUT_MS must be 0 (none) or at least 1000");
    assertThatThrownBy(
            () ->
                ServerConfig.from(
                    Map.of(
                        "WORKFLOWS_DB_STATEMENT_TIMEOUT_MS", "60000",
                        "WORKFLOWS_DB_SOCKET_TIMEOUT_MS", "45000")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "WORKFLOWS_DB_SOCKET_TIMEOUT_MS (45000) must be longer than"
                + " WORKFLOWS_DB_STATEMENT_TIMEOUT_MS (60000)");
    assertThatThrownBy(() -> ServerConfig.from(Map.of("WORKFLOWS_DB_STATEMENT_TIMEOUT_MS", "0")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "WORKFLOWS_DB_STATEMENT_TIMEOUT_MS 0 (none) needs WORKFLOWS_DB_SOCKET_TIMEOUT_MS 0");
    assertThatThrownBy(() -> ServerConfig.from(Map.of("WORKFLOWS_DB_STATEMENT_TIMEOUT_MS", "-1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("WORKFLOWS_DB_STATEMENT_TIMEOUT_MS must be between 0 and");
    assertThatThrownBy(() -> ServerConfig.from(Map.of("WORKFLOWS_DB_SOCKET_TIMEOUT_MS", "soon")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("WORKFLOWS_DB_SOCKET_TIMEOUT_MS must be a whole number");
    ServerConfig none =
        ServerConfig.from(
            Map.of(
                "WORKFLOWS_DB_STATEMENT_TIMEOUT_MS", "0", "WORKFLOWS_DB_SOCKET_TIMEOUT_MS", "0"));
    assertThat(none.dbStatementTimeoutMs()).isZero();
    assertThat(none.dbSocketTimeoutMs()).isZero();
    ServerConfig defaults = ServerConfig.from(Map.of());
    assertThat(defaults.dbStatementTimeoutMs()).isEqualTo(30_000);
    assertThat(defaults.dbSocketTimeoutMs()).isEqualTo(45_000);
  }
}
