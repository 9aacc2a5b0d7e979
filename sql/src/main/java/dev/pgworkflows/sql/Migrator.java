package dev.pgworkflows.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a database to the latest shipped schema. Safe to run from several processes at once: all
 * work happens under one session-level advisory lock, and each migration commits together with its
 * row in {@code queue.schema_version}. Refuses a database whose schema is newer than this code.
 */
public final class Migrator {
  private static final Logger log = LoggerFactory.getLogger(Migrator.class);

  /** Arbitrary but fixed: every process of every version must agree on it. */
  static final long LOCK_KEY = 0x70677766_6d696772L;

  private final DataSource dataSource;
  private final List<Migration> migrations;

  public Migrator(DataSource dataSource) {
    this(dataSource, Migrations.shipped());
  }

  Migrator(DataSource dataSource, List<Migration> migrations) {
    this.dataSource = dataSource;
    this.migrations = List.copyOf(migrations);
  }

  /** What a run did: the version before, the version after, and the files applied. */
  public record Result(int fromVersion, int toVersion, List<String> applied) {}

  public Result migrate() throws SQLException {
    int latest = migrations.isEmpty() ? 0 : migrations.get(migrations.size() - 1).version();
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      try (Statement s = c.createStatement()) {
        s.execute("SELECT pg_advisory_lock(" + LOCK_KEY + ")");
      }
      try {
        createVersionTable(c);
        Map<Integer, String> applied = appliedChecksums(c);
        int current = applied.keySet().stream().mapToInt(Integer::intValue).max().orElse(0);
        if (current > latest) {
          throw new SchemaTooNewException(current, latest);
        }
        List<String> done = new ArrayList<>();
        for (Migration m : migrations) {
          String checksum = applied.get(m.version());
          if (checksum != null) {
            if (!checksum.equals(m.checksum())) {
              throw new IllegalStateException(
                  "migration "
                      + m.fileName()
                      + " was edited after it was applied; add a new migration instead");
            }
            continue;
          }
          apply(c, m);
          done.add(m.fileName());
        }
        if (!done.isEmpty()) {
          log.info("schema migrated from version {} to {}: {}", current, latest, done);
        }
        return new Result(current, Math.max(current, latest), done);
      } finally {
        try (Statement s = c.createStatement()) {
          s.execute("SELECT pg_advisory_unlock(" + LOCK_KEY + ")");
        }
      }
    }
  }

  /** The version recorded in the database, 0 when it was never migrated. */
  public static int currentVersion(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT CASE WHEN to_regclass('queue.schema_version') IS NULL THEN 0"
                    + " ELSE (SELECT coalesce(max(version), 0) FROM queue.schema_version) END")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static void createVersionTable(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA IF NOT EXISTS queue");
      s.execute(
          "CREATE TABLE IF NOT EXISTS queue.schema_version ("
              + " version int PRIMARY KEY,"
              + " file_name text NOT NULL,"
              + " checksum text NOT NULL,"
              + " applied_at timestamptz NOT NULL DEFAULT now())");
    }
  }

  private static Map<Integer, String> appliedChecksums(Connection c) throws SQLException {
    Map<Integer, String> applied = new HashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT version, checksum FROM queue.schema_version")) {
      while (rs.next()) {
        applied.put(rs.getInt(1), rs.getString(2));
      }
    }
    return applied;
  }

  private static void apply(Connection c, Migration m) throws SQLException {
    c.setAutoCommit(false);
    try (Statement s = c.createStatement();
        PreparedStatement record =
            c.prepareStatement(
                "INSERT INTO queue.schema_version (version, file_name, checksum) VALUES (?, ?, ?)")) {
      s.execute(m.sql());
      record.setInt(1, m.version());
      record.setString(2, m.fileName());
      record.setString(3, m.checksum());
      record.executeUpdate();
      c.commit();
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw new SQLException("migration " + m.fileName() + " failed: " + e.getMessage(), e);
    } finally {
      c.setAutoCommit(true);
    }
  }
}
