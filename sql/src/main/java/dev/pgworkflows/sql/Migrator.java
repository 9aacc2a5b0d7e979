package dev.pgworkflows.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a database to the shipped schema and functions, in one transaction under one session-level
 * advisory lock, so several processes may start at once and a failure leaves no trace.
 *
 * <ol>
 *   <li>Schema migrations ({@code sql/schema/}) not yet recorded in {@code queue.schema_version}
 *       run in version order. A recorded migration whose file changed is an error, and so is a
 *       database whose schema is newer than this code.
 *   <li>When a function file ({@code sql/functions/}) differs from the checksum recorded in {@code
 *       queue.function_file}, or a migration ran, every function file is applied again, and any
 *       function of schema {@code queue} that no file defined is dropped.
 * </ol>
 */
public final class Migrator {
  private static final Logger log = LoggerFactory.getLogger(Migrator.class);

  /** Arbitrary but fixed: every process of every version must agree on it. */
  static final long LOCK_KEY = 0x70677766_6d696772L;

  /**
   * How long one statement of the migration waits for a table lock before the attempt gives way.
   */
  static final long LOCK_TIMEOUT_MS = 5_000;

  /** How long attempts that gave way to other sessions' locks are made again. */
  static final long RETRY_FOR_MS = 120_000;

  private final DataSource dataSource;
  private final List<Migration> migrations;
  private final List<FunctionFile> functionFiles;

  public Migrator(DataSource dataSource) {
    this(dataSource, Migrations.shipped(), FunctionFile.shipped());
  }

  Migrator(DataSource dataSource, List<Migration> migrations, List<FunctionFile> functionFiles) {
    this.dataSource = dataSource;
    this.migrations = List.copyOf(migrations);
    this.functionFiles = List.copyOf(functionFiles);
  }

  /**
   * What a run did: the schema version before and after, the migrations applied, the function files
   * applied (empty when none changed) and the functions dropped.
   */
  public record Result(
      int fromVersion,
      int toVersion,
      List<String> applied,
      List<String> functionFilesApplied,
      List<String> functionsDropped) {}

  public Result migrate() throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      try (Statement s = c.createStatement()) {
        s.execute("SELECT pg_advisory_lock(" + LOCK_KEY + ")");
      }
      try {
        Result result = migrateRetrying(c);
        if (!result.applied().isEmpty()) {
          log.info(
              "schema migrated from version {} to {}: {}",
              result.fromVersion(),
              result.toVersion(),
              result.applied());
        }
        if (!result.functionFilesApplied().isEmpty()) {
          log.info(
              "functions applied from {}{}",
              result.functionFilesApplied(),
              result.functionsDropped().isEmpty() ? "" : "; dropped " + result.functionsDropped());
        }
        return result;
      } finally {
        try (Statement s = c.createStatement()) {
          s.execute("SELECT pg_advisory_unlock(" + LOCK_KEY + ")");
        }
      }
    }
  }

  /**
   * One transaction, tried again when PostgreSQL aborts it for a deadlock or a lock it could not
   * take within {@link #LOCK_TIMEOUT_MS}. Servers of the previous release keep serving while a new
   * one migrates, and a migration that alters a table they write takes its locks in whatever order
   * its statements run, so either can happen under load. A lock timeout also keeps an {@code ALTER
   * TABLE} from queueing their statements behind it for long.
   */
  private Result migrateRetrying(Connection c) throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RETRY_FOR_MS);
    for (int attempt = 1; ; attempt++) {
      c.setAutoCommit(false);
      try {
        try (Statement s = c.createStatement()) {
          s.execute("SET LOCAL lock_timeout = " + LOCK_TIMEOUT_MS);
        }
        Result result = migrateLocked(c);
        c.commit();
        return result;
      } catch (SQLException e) {
        c.rollback();
        if (!isLockConflict(e) || System.nanoTime() > deadline) {
          throw e;
        }
        log.warn(
            "migration attempt {} gave way to other sessions' locks ({}); trying again",
            attempt,
            e.getMessage());
        sleep(Math.min(2_000, 100L << Math.min(attempt, 4)));
      } catch (RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  /** A deadlock (40P01) or a lock not taken in time (55P03), here or in a statement it wrapped. */
  static boolean isLockConflict(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql
          && ("40P01".equals(sql.getSQLState()) || "55P03".equals(sql.getSQLState()))) {
        return true;
      }
    }
    return false;
  }

  private static void sleep(long ms) throws SQLException {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLException("interrupted while waiting to migrate again", e);
    }
  }

  private Result migrateLocked(Connection c) throws SQLException {
    createBookkeeping(c);
    if (!migrations.isEmpty()) {
      PreReleaseSchema.adoptIfPresent(c, migrations.get(0));
    }
    int latest = migrations.isEmpty() ? 0 : migrations.get(migrations.size() - 1).version();
    Map<Integer, String> recorded = recordedChecksums(c);
    int current = recorded.keySet().stream().mapToInt(Integer::intValue).max().orElse(0);
    if (current > latest) {
      throw new SchemaTooNewException(current, latest);
    }
    List<String> applied = new ArrayList<>();
    for (Migration m : migrations) {
      String checksum = recorded.get(m.version());
      if (checksum == null) {
        apply(c, m);
        applied.add(m.fileName());
      } else if (!checksum.equals(m.checksum())) {
        throw new IllegalStateException(
            "migration " + m.fileName() + " was edited after it was applied; add a new migration");
      }
    }
    List<String> filesApplied = List.of();
    List<String> dropped = List.of();
    if (!applied.isEmpty() || !recordedFunctionFiles(c).equals(shippedFunctionFiles())) {
      filesApplied = applyFunctionFiles(c);
      dropped = dropFunctionsNoFileDefines(c);
      grantRoles(c);
      recordFunctionFiles(c);
    }
    return new Result(current, Math.max(current, latest), applied, filesApplied, dropped);
  }

  /**
   * Grants the least-privilege roles ({@code sql/roles.sql}), when they exist, the functions just
   * applied ({@code queue.grant_roles}): a function new in this release reaches them only so.
   */
  private static void grantRoles(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      boolean defined;
      try (ResultSet rs =
          s.executeQuery("SELECT to_regprocedure('queue.grant_roles()') IS NOT NULL")) {
        defined = rs.next() && rs.getBoolean(1);
      }
      if (defined) {
        s.execute("SELECT queue.grant_roles()");
      }
    }
  }

  /**
   * The script that creates the least-privilege roles {@code pgworkflows_worker} and {@code
   * pgworkflows_client} and grants them their functions ({@code sql/roles.sql}); run it as a
   * superuser after {@link #migrate()}.
   */
  public static String rolesScript() {
    return SqlResources.read("db/", "roles.sql");
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

  private static void createBookkeeping(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA IF NOT EXISTS queue");
      s.execute(
          "CREATE TABLE IF NOT EXISTS queue.schema_version ("
              + " version int PRIMARY KEY,"
              + " file_name text NOT NULL,"
              + " checksum text NOT NULL,"
              + " applied_at timestamptz NOT NULL DEFAULT now())");
      s.execute(
          "CREATE TABLE IF NOT EXISTS queue.function_file ("
              + " file_name text PRIMARY KEY,"
              + " checksum text NOT NULL,"
              + " applied_at timestamptz NOT NULL DEFAULT now())");
    }
  }

  private static Map<Integer, String> recordedChecksums(Connection c) throws SQLException {
    Map<Integer, String> recorded = new HashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT version, checksum FROM queue.schema_version")) {
      while (rs.next()) {
        recorded.put(rs.getInt(1), rs.getString(2));
      }
    }
    return recorded;
  }

  private static void apply(Connection c, Migration m) throws SQLException {
    try (Statement s = c.createStatement();
        PreparedStatement record =
            c.prepareStatement(
                "INSERT INTO queue.schema_version (version, file_name, checksum) VALUES (?, ?, ?)")) {
      s.execute(m.sql());
      record.setInt(1, m.version());
      record.setString(2, m.fileName());
      record.setString(3, m.checksum());
      record.executeUpdate();
    } catch (SQLException e) {
      throw new SQLException("migration " + m.fileName() + " failed: " + e.getMessage(), e);
    }
  }

  private Map<String, String> shippedFunctionFiles() {
    Map<String, String> shipped = new LinkedHashMap<>();
    for (FunctionFile f : functionFiles) {
      shipped.put(f.fileName(), f.checksum());
    }
    return shipped;
  }

  private static Map<String, String> recordedFunctionFiles(Connection c) throws SQLException {
    Map<String, String> recorded = new HashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT file_name, checksum FROM queue.function_file")) {
      while (rs.next()) {
        recorded.put(rs.getString(1), rs.getString(2));
      }
    }
    return recorded;
  }

  private List<String> applyFunctionFiles(Connection c) throws SQLException {
    List<String> names = new ArrayList<>();
    for (FunctionFile f : functionFiles) {
      try (Statement s = c.createStatement()) {
        s.execute(f.sql());
      } catch (SQLException e) {
        throw new SQLException("function file " + f.fileName() + " failed: " + e.getMessage(), e);
      }
      names.add(f.fileName());
    }
    return names;
  }

  /**
   * Every function the files define was created or replaced by this transaction, which makes its
   * catalog row this transaction's own; a function of schema queue whose row is older was defined
   * by no file, so it goes.
   */
  private static List<String> dropFunctionsNoFileDefines(Connection c) throws SQLException {
    List<String> stale = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT p.oid::regprocedure::text FROM pg_proc p"
                    + " WHERE p.pronamespace = 'queue'::regnamespace"
                    + " AND NOT (p.xmin = pg_current_xact_id()::xid) ORDER BY 1")) {
      while (rs.next()) {
        stale.add(rs.getString(1));
      }
    }
    for (String function : stale) {
      try (Statement s = c.createStatement()) {
        s.execute("DROP FUNCTION " + function);
      } catch (SQLException e) {
        throw new SQLException(
            "function "
                + function
                + " is in no function file but could not be dropped: "
                + e.getMessage(),
            e);
      }
    }
    return stale;
  }

  private void recordFunctionFiles(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO queue.function_file (file_name, checksum) VALUES (?, ?)")) {
      s.executeUpdate("DELETE FROM queue.function_file");
      for (FunctionFile f : functionFiles) {
        insert.setString(1, f.fileName());
        insert.setString(2, f.checksum());
        insert.addBatch();
      }
      insert.executeBatch();
    }
  }
}
