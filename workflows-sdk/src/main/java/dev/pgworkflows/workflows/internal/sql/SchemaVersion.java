package dev.pgworkflows.workflows.internal.sql;

import dev.pgworkflows.workflows.QueueSchemaException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks that a connection's database holds the {@code queue} schema at the version this SDK was
 * built for: the last migration of {@code sql/schema/index.txt}, copied into the jar at build time.
 * A database found right is remembered by URL and user, so each one costs two small queries once
 * per JVM; a wrong one is asked again next time (a server may have migrated it meanwhile).
 */
public final class SchemaVersion {
  private static final String INDEX = "schema/index.txt";
  private static final Pattern MIGRATION = Pattern.compile("V(\\d+)__.*\\.sql");

  /** The version this SDK's calls were written against. */
  public static final int EXPECTED = readExpected();

  private static final Set<String> checked = ConcurrentHashMap.newKeySet();

  private SchemaVersion() {}

  /**
   * Returns normally when the database is at {@link #EXPECTED}; throws {@link QueueSchemaException}
   * otherwise. Reads only, and raises no SQL error, so the caller's transaction stays usable either
   * way.
   */
  public static void require(Connection c) throws SQLException {
    String key = c.getMetaData().getURL() + " " + c.getMetaData().getUserName();
    if (checked.contains(key)) {
      return;
    }
    int found = found(c);
    if (found == 0) {
      throw new QueueSchemaException(
          "the queue schema is not installed in this database; start a pgworkflows server"
              + " against it once (it installs the schema), then try again",
          EXPECTED,
          0);
    }
    if (found != EXPECTED) {
      throw new QueueSchemaException(
          "the queue schema in this database is at version "
              + found
              + " but this SDK was built for version "
              + EXPECTED
              + "; use the SDK release that matches the server migrating this database",
          EXPECTED,
          found);
    }
    checked.add(key);
  }

  /** Forgets every database found right, as after a call that did not find a function. */
  public static void forget() {
    checked.clear();
  }

  /** The database's schema version, 0 without the schema (looked up first: no error raised). */
  private static int found(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      try (ResultSet rs =
          s.executeQuery("SELECT to_regclass('queue.schema_version') IS NOT NULL")) {
        rs.next();
        if (!rs.getBoolean(1)) {
          return 0;
        }
      }
      try (ResultSet rs =
          s.executeQuery("SELECT coalesce(max(version), 0) FROM queue.schema_version")) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static int readExpected() {
    try (InputStream in = SchemaVersion.class.getResourceAsStream(INDEX)) {
      if (in == null) {
        throw new IllegalStateException("the SDK jar lacks " + INDEX);
      }
      int last = 0;
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        Matcher m = MIGRATION.matcher(line.trim());
        if (m.matches()) {
          last = Math.max(last, Integer.parseInt(m.group(1)));
        }
      }
      if (last == 0) {
        throw new IllegalStateException(INDEX + " in the SDK jar lists no migration");
      }
      return last;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
