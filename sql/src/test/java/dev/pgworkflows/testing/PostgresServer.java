package dev.pgworkflows.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The one PostgreSQL server a test JVM uses: {@code TEST_DATABASE_URL} when set, else a
 * Testcontainers container when a Docker engine answers, else embedded PostgreSQL 18. Never absent,
 * so no test is ever skipped for want of a database.
 */
public record PostgresServer(String host, int port, String user, String password, String kind) {
  private static final Logger log = LoggerFactory.getLogger(PostgresServer.class);
  private static PostgresServer instance;

  /** The server of this JVM, started on first use. */
  public static synchronized PostgresServer get() {
    if (instance == null) {
      instance = start();
      log.info("tests use {} PostgreSQL at {}:{}", instance.kind, instance.host, instance.port);
    }
    return instance;
  }

  /** A JDBC URL for one database of this server. */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://" + host + ":" + port + "/" + database;
  }

  private static PostgresServer start() {
    String url = System.getenv("TEST_DATABASE_URL");
    if (url != null && !url.isBlank()) {
      return fromUrl(url);
    }
    if (dockerAnswers()) {
      return container();
    }
    return embedded();
  }

  /** Accepts {@code postgresql://user:pw@host:port/db} or {@code jdbc:postgresql://...}. */
  static PostgresServer fromUrl(String url) {
    URI uri = URI.create(url.startsWith("jdbc:") ? url.substring(5) : url);
    String user = "postgres";
    String password = "";
    if (uri.getUserInfo() != null) {
      String[] parts = uri.getUserInfo().split(":", 2);
      user = parts[0];
      password = parts.length > 1 ? parts[1] : "";
    }
    return new PostgresServer(
        uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort(), user, password, "external");
  }

  private static boolean dockerAnswers() {
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException | LinkageError e) {
      return false;
    }
  }

  private static PostgresServer container() {
    @SuppressWarnings("resource") // lives as long as the JVM; Testcontainers reaps it
    PostgreSQLContainer pg =
        new PostgreSQLContainer("postgres:18").withCommand("postgres", "-c", "fsync=off");
    pg.start();
    return new PostgresServer(
        pg.getHost(), pg.getMappedPort(5432), pg.getUsername(), pg.getPassword(), "Testcontainers");
  }

  private static PostgresServer embedded() {
    try {
      // Speed over durability: a test database need not survive a crash of its machine (the
      // server's embedded database, which users run, keeps fsync and synchronous_commit on).
      EmbeddedPostgres pg =
          EmbeddedPostgres.builder()
              .setServerConfig("fsync", "off")
              .setServerConfig("synchronous_commit", "off")
              .setServerConfig("full_page_writes", "off")
              .setServerConfig("max_connections", "300")
              .start();
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      pg.close();
                    } catch (IOException ignored) {
                      // the JVM is going away; the temp directory goes with the OS
                    }
                  }));
      return new PostgresServer("localhost", pg.getPort(), "postgres", "postgres", "embedded");
    } catch (IOException e) {
      throw new UncheckedIOException("could not start embedded PostgreSQL", e);
    }
  }
}
