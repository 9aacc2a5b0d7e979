package dev.pgworkflows.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Databases made by the pre-release migration series (V001__queue.sql to
 * V032__completion_batch_fewer_statements.sql, before the schema was squashed into one baseline).
 * At its last version such a database has exactly the baseline's tables, types and indexes, so it
 * is adopted: its version rows are replaced by the baseline's, and the Migrator then re-applies
 * every function file. At an earlier version it is refused, with what to do.
 */
final class PreReleaseSchema {
  private static final Logger log = LoggerFactory.getLogger(PreReleaseSchema.class);

  static final String FIRST_FILE = "V001__queue.sql";
  static final String LAST_FILE = "V032__completion_batch_fewer_statements.sql";
  static final int LAST_VERSION = 32;

  private PreReleaseSchema() {}

  /**
   * Adopts a pre-release database at the series' last version; returns false for any other
   * database. Runs inside the Migrator's transaction and lock.
   */
  static boolean adoptIfPresent(Connection c, Migration baseline) throws SQLException {
    if (!FIRST_FILE.equals(fileNameOf(c, 1))) {
      return false;
    }
    int version;
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT max(version) FROM queue.schema_version")) {
      rs.next();
      version = rs.getInt(1);
    }
    if (version != LAST_VERSION || !LAST_FILE.equals(fileNameOf(c, LAST_VERSION))) {
      throw new IllegalStateException(
          "this database's schema is at version "
              + version
              + " of the pre-release migration series ("
              + FIRST_FILE
              + " ...), which this server adopts only at its last version, "
              + LAST_VERSION
              + ". Start a pre-release server (0.1.0-SNAPSHOT built before the schema baseline)"
              + " on it once to bring it to version "
              + LAST_VERSION
              + ", then start this one; or, if its data may go, DROP SCHEMA queue CASCADE.");
    }
    try (Statement s = c.createStatement();
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO queue.schema_version (version, file_name, checksum) VALUES (?, ?, ?)")) {
      s.executeUpdate("DELETE FROM queue.schema_version");
      insert.setInt(1, baseline.version());
      insert.setString(2, baseline.fileName());
      insert.setString(3, baseline.checksum());
      insert.executeUpdate();
    }
    log.info(
        "adopted a database of the pre-release migration series at version {} as {}",
        LAST_VERSION,
        baseline.fileName());
    return true;
  }

  private static String fileNameOf(Connection c, int version) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT file_name FROM queue.schema_version WHERE version = ?")) {
      ps.setInt(1, version);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }
}
