package dev.pgworkflows.server.internal.db;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.engine.internal.db.ConnectionInfo;
import dev.pgworkflows.engine.internal.db.Durability;
import dev.pgworkflows.sql.Migrator;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A server's database as it starts: the given one or an embedded one, migrated, its durability
 * read, the server's retention ceiling written, and the pool onto it.
 *
 * @param pool the server's connections
 * @param connection where the database is and with which credentials
 * @param durability whether a commit it acknowledges survives a crash of its machine
 * @param embedded whether this process started it (and must stop it)
 */
public record ServerDatabase(
    HikariDataSource pool, ConnectionInfo connection, Durability durability, boolean embedded) {

  /** What opening the database takes from the server's configuration. */
  public record Settings(
      Optional<String> url,
      Optional<String> user,
      Optional<String> password,
      Path dataDir,
      int embeddedPort,
      int poolSize,
      long statementTimeoutMs,
      long socketTimeoutMs,
      int maxRetentionDays) {}

  /**
   * Opens it; each thing opened is added to {@code closeables} as it opens, so that a failure later
   * on closes what was opened before (in reverse order).
   */
  public static ServerDatabase open(Settings settings, List<AutoCloseable> closeables) {
    ConnectionInfo info;
    boolean embedded = settings.url().isEmpty();
    if (embedded) {
      EmbeddedDatabase db = EmbeddedDatabase.start(settings.dataDir(), settings.embeddedPort());
      closeables.add(db);
      // Its superuser with the password it asks for (kept in the data directory's pg-password).
      info = db.connectionInfo();
    } else {
      info = ConnectionInfo.parse(settings.url().get(), settings.user(), settings.password());
    }
    HikariDataSource pool =
        Pool.open(
            info, settings.poolSize(), settings.statementTimeoutMs(), settings.socketTimeoutMs());
    closeables.add(pool);
    try {
      // Not through the pool: a migration that rewrites a large table may rightly take longer
      // than the pool's statement and socket timeouts allow a request.
      new Migrator(migrationConnections(info)).migrate();
    } catch (SQLException e) {
      throw new IllegalStateException("could not migrate the database: " + e.getMessage(), e);
    }
    Durability durability;
    try (Connection c = pool.getConnection()) {
      durability = Durability.read(c);
      // The ceiling a start through SQL (not this server's routes) applies; several servers
      // configured apart: the last one started wins.
      try (PreparedStatement put =
          c.prepareStatement("SELECT queue.setting_put('max_retention_days', ?)")) {
        put.setString(1, Integer.toString(settings.maxRetentionDays()));
        put.execute();
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "could not read the database's settings: " + e.getMessage(), e);
    }
    return new ServerDatabase(pool, info, durability, embedded);
  }

  /** Connections for the migrator: the database's, without the pool's timeouts. */
  private static PGSimpleDataSource migrationConnections(ConnectionInfo info) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(info.jdbcUrl());
    info.user().ifPresent(ds::setUser);
    info.password().ifPresent(ds::setPassword);
    ds.setApplicationName("pgworkflows-migrator");
    ds.setConnectTimeout(5);
    ds.setLoginTimeout(10);
    return ds;
  }
}
