package dev.pgworkflows.server.internal.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.engine.internal.db.ConnectionInfo;

/** The HikariCP pool every request shares. */
public final class Pool {
  private Pool() {}

  /**
   * Every wait on the database is bounded, so a database whose host or network stops answering (no
   * RST, no FIN: the connections just go quiet) fails a request instead of holding it forever: a
   * connection is waited for at most 5 s, opening one at most 10 s, a statement runs at most {@code
   * statementTimeoutMs} (PostgreSQL cancels it and the connection stays usable), and an answer is
   * waited for at most {@code socketTimeoutMs} (the connection is then thrown away). No request
   * holds a connection while it waits for work: long polls wait in Java.
   */
  public static HikariDataSource open(
      ConnectionInfo db, int size, long statementTimeoutMs, long socketTimeoutMs) {
    HikariConfig cfg = new HikariConfig();
    cfg.setPoolName("pgworkflows");
    cfg.setJdbcUrl(db.jdbcUrl());
    db.user().ifPresent(cfg::setUsername);
    db.password().ifPresent(cfg::setPassword);
    cfg.setMaximumPoolSize(size);
    cfg.setMinimumIdle(Math.min(4, size));
    cfg.setConnectionTimeout(5_000);
    // A connection idle for a while is checked before it is lent; the check is bounded too.
    cfg.setValidationTimeout(3_000);
    // Fail fast at start only when the database is plainly absent; later outages are survived.
    cfg.setInitializationFailTimeout(30_000);
    cfg.addDataSourceProperty("ApplicationName", "pgworkflows");
    cfg.addDataSourceProperty("tcpKeepAlive", "true");
    cfg.addDataSourceProperty("connectTimeout", "5");
    cfg.addDataSourceProperty("loginTimeout", "10");
    if (socketTimeoutMs > 0) {
      // pgjdbc counts it in whole seconds.
      cfg.addDataSourceProperty("socketTimeout", Long.toString((socketTimeoutMs + 999) / 1000));
    }
    if (statementTimeoutMs > 0) {
      // A SET run once as each connection is opened, before the pool lends it (one statement per
      // new connection, none per request). Not the startup parameter "options": pgjdbc lets an
      // "options" in DATABASE_URL silently replace it, and PgBouncer refuses it outright.
      cfg.setConnectionInitSql("SET statement_timeout = " + statementTimeoutMs);
    }
    return new HikariDataSource(cfg);
  }
}
