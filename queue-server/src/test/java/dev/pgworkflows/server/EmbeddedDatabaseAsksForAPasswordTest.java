package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.server.testing.ServerProcess;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded PostgreSQL lets in only who has its password: {@code scram-sha-256} for every
 * connection, local socket or TCP, with a random password the server makes at first start and keeps
 * in {@code <WORKFLOWS_DATA_DIR>/pg-password}, readable by its owner only. A data directory made
 * before passwords (its rules say {@code trust}) is upgraded at its next start.
 */
class EmbeddedDatabaseAsksForAPasswordTest {
  private static final Duration READY = Duration.ofSeconds(90);

  @Test
  void theServersDatabaseRefusesConnectionsWithoutThePasswordItKeepsOwnerOnly(@TempDir Path dir)
      throws Exception {
    Path data = dir.resolve("data");
    Path passwordFile = data.resolve("pg-password");
    int pgPort = ServerProcess.freePort();
    String url = "jdbc:postgresql://127.0.0.1:" + pgPort + "/postgres";
    String password;
    try (ServerProcess server =
        ServerProcess.start(data, ServerProcess.freePort(), pgPort, dir.resolve("1.log"))) {
      server.awaitReady(READY);

      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(passwordFile)))
          .isEqualTo("rw-------");
      password = Files.readString(passwordFile, StandardCharsets.UTF_8).strip();
      assertThat(password).hasSizeGreaterThanOrEqualTo(32).matches("[A-Za-z0-9]+");

      assertRefused(url, null);
      assertRefused(url, "postgres");
      assertRefused(url, password.substring(1));
      assertThat(currentUser(url, password)).isEqualTo("postgres");
      assertNoRuleTrusts(data.resolve("postgres"), url, password);

      // The log says where the password is and how to connect, never the password.
      assertThat(server.log())
          .contains(passwordFile.toString())
          .contains("PGPASSWORD=$(cat " + passwordFile + ") psql -h 127.0.0.1 -p " + pgPort)
          .doesNotContain(password);
      server.sigterm();
      assertThat(server.awaitExit(Duration.ofSeconds(60))).isEqualTo(143); // 128 + SIGTERM
    }

    // A restart reads the same password, and its own pool connects with it.
    try (ServerProcess server =
        ServerProcess.start(data, ServerProcess.freePort(), pgPort, dir.resolve("2.log"))) {
      server.awaitReady(READY);
      assertThat(Files.readString(passwordFile, StandardCharsets.UTF_8).strip())
          .isEqualTo(password);
      assertThat(currentUser(url, password)).isEqualTo("postgres");
      assertRefused(url, null);
      assertThat(server.log()).doesNotContain(password);
      server.sigterm();
      assertThat(server.awaitExit(Duration.ofSeconds(60))).isEqualTo(143); // 128 + SIGTERM
    }
  }

  @Test
  void aDataDirectoryMadeBeforePasswordsIsUpgradedAtItsNextStart(@TempDir Path dir)
      throws Exception {
    Path data = dir.resolve("data");
    Path pgData = data.resolve("postgres");
    int pgPort = ServerProcess.freePort();
    String url = "jdbc:postgresql://127.0.0.1:" + pgPort + "/postgres";
    // As earlier servers made it: zonky's initdb, "trust" for every local connection.
    try (EmbeddedPostgres old =
            EmbeddedPostgres.builder()
                .setDataDirectory(pgData)
                .setCleanDataDirectory(false)
                .setPort(pgPort)
                .start();
        Connection c = DriverManager.getConnection(old.getJdbcUrl("postgres", "postgres"));
        Statement s = c.createStatement()) {
      s.execute("create table kept (note text)");
      s.execute("insert into kept values ('from before passwords')");
    }
    assertThat(Files.readString(pgData.resolve("pg_hba.conf"))).containsPattern("(?m)^host.*trust");
    assertThat(data.resolve("pg-password")).doesNotExist();

    try (QueueServer server = QueueServer.start(config(data, pgPort))) {
      Path passwordFile = data.resolve("pg-password");
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(passwordFile)))
          .isEqualTo("rw-------");
      String password = Files.readString(passwordFile, StandardCharsets.UTF_8).strip();
      assertRefused(url, null);
      assertRefused(url, "postgres");
      assertNoRuleTrusts(pgData, url, password);
      try (Connection c = connect(url, password);
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("select note from kept")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo("from before passwords");
      }
      // The server's own connections carry the password.
      try (Connection c = server.connectToDatabase();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("select count(*) from queue.queue_meta")) {
        assertThat(rs.next()).isTrue();
      }
    }
  }

  @Test
  void aDatabaseThatAsksForAPasswordWhoseFileIsGoneRefusesToStartAndSaysSo(@TempDir Path dir)
      throws Exception {
    Path data = dir.resolve("data");
    int pgPort = ServerProcess.freePort();
    try (QueueServer server = QueueServer.start(config(data, pgPort))) {
      assertThat(server.port()).isPositive();
    }
    Files.delete(data.resolve("pg-password"));

    assertThatThrownBy(() -> QueueServer.start(config(data, pgPort)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(data.resolve("pg-password").toString())
        .hasMessageContaining("restore the file");
    assertThat(data.resolve("pg-password")).doesNotExist();
  }

  private static ServerConfig config(Path data, int pgPort) {
    return ServerConfig.from(
        Map.of(
            "WORKFLOWS_PORT",
            "0",
            "WORKFLOWS_EMBEDDED_PG_PORT",
            Integer.toString(pgPort),
            "WORKFLOWS_DATA_DIR",
            data.toString(),
            "WORKFLOWS_DB_POOL_SIZE",
            "4"));
  }

  private static Connection connect(String url, String password) throws SQLException {
    Properties props = new Properties();
    props.setProperty("user", "postgres");
    if (password != null) {
      props.setProperty("password", password);
    }
    props.setProperty("connectTimeout", "5");
    return DriverManager.getConnection(url, props);
  }

  private static void assertRefused(String url, String password) {
    assertThatThrownBy(() -> connect(url, password).close())
        .as("a connection with password %s", password == null ? "(none)" : "(a wrong one)")
        .isInstanceOf(SQLException.class)
        .satisfies(
            e ->
                assertThat(((SQLException) e).getSQLState())
                    // 08004: the driver, asked for a password it has not; 28P01: a wrong one.
                    .isIn("08004", "28P01"));
  }

  private static String currentUser(String url, String password) throws SQLException {
    try (Connection c = connect(url, password);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("select current_user")) {
      rs.next();
      return rs.getString(1);
    }
  }

  /** Neither the file nor the rules PostgreSQL reads from it let anyone in unasked. */
  private static void assertNoRuleTrusts(Path pgData, String url, String password)
      throws Exception {
    List<String> rules =
        Files.readAllLines(pgData.resolve("pg_hba.conf")).stream()
            .map(l -> l.replaceFirst("#.*", "").strip())
            .filter(l -> !l.isEmpty())
            .toList();
    assertThat(rules).isNotEmpty().noneMatch(l -> l.matches(".*\\btrust\\b.*"));
    List<String> methods = new ArrayList<>();
    try (Connection c = connect(url, password);
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "select auth_method, error from pg_hba_file_rules order by rule_number")) {
      while (rs.next()) {
        assertThat(rs.getString(2)).isNull();
        methods.add(rs.getString(1));
      }
    }
    assertThat(methods).isNotEmpty().containsOnly("scram-sha-256");
  }
}
