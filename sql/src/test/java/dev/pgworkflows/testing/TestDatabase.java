package dev.pgworkflows.testing;

import dev.pgworkflows.sql.Migrator;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A fresh database for one test class, cloned from a template this JVM migrated once. Cloning takes
 * milliseconds; migrating would take far longer.
 */
public record TestDatabase(String name, String jdbcUrl, String user, String password) {
  private static final String TEMPLATE =
      "pgwf_template_" + UUID.randomUUID().toString().substring(0, 8);
  private static final AtomicInteger counter = new AtomicInteger();
  private static boolean templateReady;

  /** A new, migrated, empty database. */
  public static TestDatabase fresh() {
    PostgresServer server = PostgresServer.get();
    String name = "pgwf_test_" + ProcessHandle.current().pid() + "_" + counter.incrementAndGet();
    try {
      ensureTemplate(server);
      exec(server, "CREATE DATABASE " + name + " TEMPLATE " + TEMPLATE);
    } catch (SQLException e) {
      throw new IllegalStateException("could not create test database " + name, e);
    }
    return new TestDatabase(name, server.jdbcUrl(name), server.user(), server.password());
  }

  /** An empty database with no schema at all, for migration tests. */
  public static TestDatabase blank() {
    PostgresServer server = PostgresServer.get();
    String name = "pgwf_blank_" + ProcessHandle.current().pid() + "_" + counter.incrementAndGet();
    try {
      exec(server, "CREATE DATABASE " + name);
    } catch (SQLException e) {
      throw new IllegalStateException("could not create test database " + name, e);
    }
    return new TestDatabase(name, server.jdbcUrl(name), server.user(), server.password());
  }

  public DataSource dataSource() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(jdbcUrl);
    ds.setUser(user);
    ds.setPassword(password);
    return ds;
  }

  public Connection connect() throws SQLException {
    return DriverManager.getConnection(jdbcUrl, user, password);
  }

  private static synchronized void ensureTemplate(PostgresServer server) throws SQLException {
    if (templateReady) {
      return;
    }
    exec(server, "CREATE DATABASE " + TEMPLATE);
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(server.jdbcUrl(TEMPLATE));
    ds.setUser(server.user());
    ds.setPassword(server.password());
    new Migrator(ds).migrate();
    templateReady = true;
  }

  private static void exec(PostgresServer server, String sql) throws SQLException {
    try (Connection c =
            DriverManager.getConnection(
                server.jdbcUrl("postgres"), server.user(), server.password());
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
