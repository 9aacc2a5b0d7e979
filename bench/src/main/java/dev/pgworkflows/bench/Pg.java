package dev.pgworkflows.bench;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/** The one PostgreSQL both systems run on, fresh databases, and resource counters. */
final class Pg implements AutoCloseable {
  /**
   * The process id of the postmaster this JVM started, once known: CPU is counted for it and its
   * children only, so another PostgreSQL on the machine (another probe's, run at the same time to
   * share the machine's noise) stays out of this one's numbers.
   */
  private static volatile String postmaster;

  private final EmbeddedPostgres pg;
  private int databases;

  Pg() throws IOException {
    // Same settings for both systems: commits wait for their WAL write, though zonky starts the
    // server without fsync (-F), for both alike. Speed over durability, unlike the server's own
    // embedded database, which turns fsync on (the server's start log says which it runs on).
    EmbeddedPostgres.Builder builder =
        EmbeddedPostgres.builder()
            .setServerConfig("max_connections", "300")
            .setServerConfig("shared_buffers", "512MB")
            .setServerConfig("synchronous_commit", "on")
            // Statements per step: top-level statements only, what a client sends.
            .setServerConfig("shared_preload_libraries", "pg_stat_statements")
            .setServerConfig("pg_stat_statements.track", System.getProperty("bench.track", "top"))
            .setServerConfig(
                "pg_stat_statements.track_planning", System.getProperty("bench.planning", "off"));
    // -Dbench.pg.<setting>=<value> sets any other server setting, for diagnosis
    // (e.g. -Dbench.pg.log_lock_waits=on); the benchmark's own runs set none.
    for (String key : System.getProperties().stringPropertyNames()) {
      if (key.startsWith("bench.pg.")) {
        builder.setServerConfig(key.substring("bench.pg.".length()), System.getProperty(key));
      }
    }
    pg = builder.start();
    try {
      exec("postgres", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    } catch (SQLException e) {
      throw new IOException("pg_stat_statements is not available: " + e.getMessage(), e);
    }
    // The backend's parent, read while its connection is open: once closed, the backend may be
    // gone before /proc is read, and with no postmaster known every cluster's CPU would count.
    try (Connection c = DriverManager.getConnection(jdbcUrl("postgres"), "postgres", "postgres");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      postmaster = parentOf(Long.toString(rs.getLong(1)));
    } catch (SQLException e) {
      throw new IOException("could not find the postmaster: " + e.getMessage(), e);
    }
    if (postmaster == null) {
      throw new IOException(
          "could not find the postmaster: its backend's /proc entry is unreadable");
    }
  }

  /** The parent process id of {@code pid} by /proc, or null where there is none to read. */
  private static String parentOf(String pid) {
    try {
      String stat = Files.readString(Path.of("/proc", pid, "stat"));
      return stat.substring(stat.lastIndexOf(')') + 2).split(" ")[1];
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Commits and top-level statements so far, over the whole cluster. */
  record Counts(long commits, long statements) {
    Counts since(Counts before) {
      return new Counts(commits - before.commits, statements - before.statements);
    }
  }

  /**
   * The cluster's counters. Only one system runs at a time, so the difference over a workload is
   * that system's (plus the harness's few polls for completion). Backends publish their commit
   * counts within about a second of going idle, so callers wait that long before the second read.
   */
  Counts counts() throws SQLException {
    return new Counts(
        scalar("postgres", "SELECT sum(xact_commit)::bigint FROM pg_stat_database"),
        scalar("postgres", "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements"));
  }

  String jdbcUrl(String db) {
    return pg.getJdbcUrl("postgres", db);
  }

  String freshDatabase(String prefix) throws SQLException {
    String name = prefix + "_" + (++databases);
    exec("postgres", "CREATE DATABASE " + name);
    return name;
  }

  void exec(String db, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(jdbcUrl(db), "postgres", "postgres");
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  long scalar(String db, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(jdbcUrl(db), "postgres", "postgres");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** WAL position in bytes. */
  long walLsn() throws SQLException {
    return scalar("postgres", "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn");
  }

  /** CPU seconds so far: this JVM's, and each postgres process's by pid. */
  record Cpu(double jvm, Map<String, Double> postgres) {
    /**
     * CPU seconds used since {@code before}. A postgres process that started since counts whole,
     * one that ended since is left out (so a pool closing during the window cannot make the sum go
     * down).
     */
    double since(Cpu before) {
      double pg = 0;
      for (Map.Entry<String, Double> e : postgres.entrySet()) {
        pg += e.getValue() - before.postgres.getOrDefault(e.getKey(), 0.0);
      }
      return jvm - before.jvm + pg;
    }
  }

  static Cpu cpu() {
    double jvm =
        ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime()
            / 1e9;
    Map<String, Double> postgres = new HashMap<>();
    long ticks = 100; // USER_HZ on Linux
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (Path p : (Iterable<Path>) procs::iterator) {
        String name = p.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        try {
          String stat = Files.readString(p.resolve("stat"));
          int close = stat.lastIndexOf(')');
          String comm = stat.substring(stat.indexOf('(') + 1, close);
          if (!comm.startsWith("postgres")) {
            continue;
          }
          String[] f = stat.substring(close + 2).split(" ");
          String ours = postmaster;
          if (ours != null && !ours.equals(name) && !ours.equals(f[1])) {
            continue; // another cluster's process
          }
          // pid plus start time, so a reused pid is a new process
          postgres.put(
              name + "@" + f[19], (Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) ticks);
        } catch (IOException | RuntimeException ignored) {
          // the process went away
        }
      }
    } catch (IOException ignored) {
      // no /proc: CPU is reported for the JVM only
    }
    return new Cpu(jvm, postgres);
  }

  @Override
  public void close() throws IOException {
    pg.close();
  }
}
