package dev.pgworkflows.server.internal.db;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** PostgreSQL 18 started by the server itself, its data kept under the data directory. */
public final class EmbeddedDatabase implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedDatabase.class);

  private final EmbeddedPostgres postgres;
  private final Path dataDir;

  private EmbeddedDatabase(EmbeddedPostgres postgres, Path dataDir) {
    this.postgres = postgres;
    this.dataDir = dataDir;
  }

  /** Starts (initialising on first use) the database in {@code dataDir/postgres}. */
  public static EmbeddedDatabase start(Path dataDir, int port) {
    Path pgData = dataDir.toAbsolutePath().normalize().resolve("postgres");
    try {
      Files.createDirectories(pgData);
      EmbeddedPostgres pg =
          EmbeddedPostgres.builder()
              .setDataDirectory(pgData)
              .setCleanDataDirectory(false)
              .setPort(port)
              .setServerConfig("max_connections", "200")
              .start();
      EmbeddedDatabase db = new EmbeddedDatabase(pg, pgData);
      log.info(
          "embedded PostgreSQL is at localhost:{} with its data in {};"
              + " connect with: psql -h localhost -p {} -U postgres postgres",
          pg.getPort(),
          pgData,
          pg.getPort());
      return db;
    } catch (IOException e) {
      throw new UncheckedIOException("could not start embedded PostgreSQL in " + pgData, e);
    }
  }

  public String jdbcUrl() {
    return postgres.getJdbcUrl("postgres", "postgres");
  }

  public int port() {
    return postgres.getPort();
  }

  public Path dataDir() {
    return dataDir;
  }

  @Override
  public void close() {
    try {
      postgres.close();
    } catch (IOException e) {
      log.warn("embedded PostgreSQL did not stop cleanly: {}", e.getMessage());
    }
  }
}
