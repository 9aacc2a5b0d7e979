package dev.pgworkflows.server.internal.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/** The HikariCP pool every request shares. */
public final class Pool {
  private Pool() {}

  public static HikariDataSource open(ConnectionInfo db, int size) {
    HikariConfig cfg = new HikariConfig();
    cfg.setPoolName("pgworkflows");
    cfg.setJdbcUrl(db.jdbcUrl());
    db.user().ifPresent(cfg::setUsername);
    db.password().ifPresent(cfg::setPassword);
    cfg.setMaximumPoolSize(size);
    cfg.setMinimumIdle(Math.min(4, size));
    cfg.setConnectionTimeout(5_000);
    // Fail fast at start only when the database is plainly absent; later outages are survived.
    cfg.setInitializationFailTimeout(30_000);
    cfg.addDataSourceProperty("ApplicationName", "pgworkflows");
    cfg.addDataSourceProperty("tcpKeepAlive", "true");
    return new HikariDataSource(cfg);
  }
}
