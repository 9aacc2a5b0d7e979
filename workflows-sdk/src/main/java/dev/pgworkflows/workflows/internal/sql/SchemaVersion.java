package dev.pgworkflows.workflows.internal.sql;

import dev.pgworkflows.workflows.MissingGrantException;
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
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks that a connection's database holds the {@code queue} schema at the version this SDK was
 * built for (the last migration of {@code sql/schema/index.txt}, copied into the jar at build
 * time), with the functions it calls at the signatures it calls them with.
 *
 * <p>A database found right is remembered for {@link #TTL} by its URL (without query parameters or
 * user info, which may hold a password) and user, so a server that migrates it meanwhile is noticed
 * within that time; a database found wrong is asked again on the next call. A check is one query,
 * which raises no error of its own whether or not the schema is installed.
 *
 * <p>Function bodies are not compared: the migrator records their files' checksums ({@code
 * queue.function_file}), but a body may change at the same schema version without changing what a
 * caller sends or gets back, and comparing would need every function file in the SDK's jar. The
 * signatures are what a call depends on, and those are checked.
 */
public final class SchemaVersion {
  private static final String INDEX = "schema/index.txt";
  private static final Pattern MIGRATION = Pattern.compile("V(\\d+)__.*\\.sql");

  /** The version this SDK's calls were written against. */
  static final int EXPECTED = readExpected();

  /** How long a database found right is trusted before it is asked again. */
  static final Duration TTL = Duration.ofSeconds(60);

  /**
   * Who calls: each side needs the functions it calls, and a login of least privilege gets them
   * through a role of {@code sql/roles.sql}.
   */
  public enum Side {
    /**
     * Starts, signals and reads runs: {@link dev.pgworkflows.workflows.WorkflowSql} and clients.
     */
    CLIENT(
        "pgworkflows_client",
        "a client",
        "queue.workflow_start(text,jsonb,integer,text,integer,integer,text,jsonb)",
        "queue.workflow_signal(bigint,text,jsonb,text)",
        "queue.workflow_get(text,bigint)"),
    /** Serves workflows and runs the background jobs when it leads. */
    WORKER(
        "pgworkflows_worker",
        "a worker",
        "queue.workflow_poll(text,integer[],integer,integer,integer,timestamp with time zone,text,jsonb)",
        "queue.workflow_complete_batch(text,jsonb)",
        "queue.workflow_journal_steps(bigint,bigint,bigint,jsonb)");

    final String role;
    final String who;
    final String[] functions;

    Side(String role, String who, String... functions) {
      this.role = role;
      this.who = who;
      this.functions = functions;
    }

    /**
     * The database's version (0 without the schema; -1 when this login may not read it; read
     * through query_to_xml, so a missing table or function raises nothing; the number is read from
     * its text, which needs no XML support in the server), the first function of this side it lacks
     * (null: none) and the first it has but this login may not execute (null: none).
     */
    final String check() {
      String list = "ARRAY['" + String.join("', '", functions) + "']";
      return "SELECT CASE WHEN to_regnamespace('queue') IS NULL THEN 0"
          + " WHEN NOT has_schema_privilege('queue', 'USAGE') THEN -1"
          + " WHEN to_regclass('queue.schema_version') IS NULL THEN 0"
          + " WHEN to_regprocedure('queue.schema_version_installed()') IS NULL THEN"
          + " substring(query_to_xml("
          + "'SELECT coalesce(max(version), 0) AS v FROM queue.schema_version', false, true,"
          + " '')::text FROM '<v>([0-9]+)</v>')::int"
          + " WHEN has_function_privilege('queue.schema_version_installed()', 'EXECUTE') THEN"
          + " substring(query_to_xml('SELECT queue.schema_version_installed() AS v', false, true,"
          + " '')::text FROM '<v>([0-9]+)</v>')::int"
          + " ELSE -1 END,"
          + " CASE WHEN to_regnamespace('queue') IS NOT NULL"
          + " AND has_schema_privilege('queue', 'USAGE') THEN"
          + " (SELECT f FROM unnest("
          + list
          + ") WITH ORDINALITY u(f, n) WHERE to_regprocedure(f) IS NULL ORDER BY n LIMIT 1) END,"
          + " CASE WHEN to_regnamespace('queue') IS NOT NULL"
          + " AND has_schema_privilege('queue', 'USAGE') THEN"
          + " (SELECT f FROM unnest("
          + list
          + ") WITH ORDINALITY u(f, n) WHERE CASE WHEN to_regprocedure(f) IS NULL THEN false"
          + " ELSE NOT has_function_privilege(to_regprocedure(f), 'EXECUTE') END"
          + " ORDER BY n LIMIT 1) END,"
          + " current_user";
    }
  }

  /** The clock of {@link #TTL} in nanoseconds; tests move it. */
  static volatile LongSupplier clock = System::nanoTime;

  /** When each database (by {@link #key}) was last found right, on {@link #clock}. */
  private static final Map<String, Long> checkedAt = new ConcurrentHashMap<>();

  private SchemaVersion() {}

  /**
   * Returns normally when the database is at {@link #EXPECTED} with the functions a client calls;
   * throws {@link QueueSchemaException} otherwise.
   */
  public static void require(Connection c) throws SQLException {
    require(c, Side.CLIENT);
  }

  /**
   * Returns normally when the database is at {@link #EXPECTED} with the functions {@code side}
   * calls, and this login may call them; throws {@link QueueSchemaException} or {@link
   * MissingGrantException} otherwise.
   */
  public static void require(Connection c, Side side) throws SQLException {
    String key = key(c) + " " + side;
    long now = clock.getAsLong();
    Long at = checkedAt.get(key);
    if (at != null && now - at < TTL.toNanos()) {
      return;
    }
    int found;
    String missing;
    String refused;
    String user;
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(side.check())) {
      if (!rs.next()) {
        throw new SQLException("the schema version check answered no row");
      }
      found = rs.getInt(1);
      missing = rs.getString(2);
      refused = rs.getString(3);
      user = rs.getString(4);
    }
    if (found == -1 || refused != null) {
      checkedAt.remove(key);
      throw new MissingGrantException(
          "database user \""
              + user
              + "\" may not "
              + (refused == null ? "use schema queue" : "execute " + refused)
              + ", which "
              + side.who
              + " calls; grant it the role "
              + side.role
              + " (created by sql/roles.sql)",
          side.role);
    }
    if (found == 0) {
      checkedAt.remove(key);
      throw new QueueSchemaException(
          "the queue schema is not installed in this database; start a pgworkflows server"
              + " against it once (it installs the schema), then try again",
          EXPECTED,
          0);
    }
    if (found != EXPECTED) {
      checkedAt.remove(key);
      throw new QueueSchemaException(
          "the queue schema in this database is at version "
              + found
              + " but this SDK was built for version "
              + EXPECTED
              + "; use the SDK release that matches the server migrating this database",
          EXPECTED,
          found);
    }
    if (missing != null) {
      checkedAt.remove(key);
      throw new QueueSchemaException(
          "the queue schema in this database is at version "
              + found
              + " but lacks "
              + missing
              + ", which this SDK calls; start the server release that matches this SDK against"
              + " it once",
          EXPECTED,
          found);
    }
    checkedAt.put(key, now);
  }

  /** Forgets every database found right, as after a call that did not find a function. */
  static void forget() {
    checkedAt.clear();
  }

  /** The database a connection reaches, without anything of the URL that may hold a secret. */
  static String key(Connection c) throws SQLException {
    String url = c.getMetaData().getURL();
    url = url == null ? "" : url;
    int query = indexOfAny(url, '?', ';');
    if (query >= 0) {
      url = url.substring(0, query);
    }
    // user:password@ after the scheme's "//", which some drivers accept.
    url = url.replaceFirst("//[^/@]*@", "//");
    return url + " " + c.getMetaData().getUserName();
  }

  private static int indexOfAny(String s, char a, char b) {
    int i = s.indexOf(a);
    int j = s.indexOf(b);
    return i < 0 ? j : j < 0 ? i : Math.min(i, j);
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
