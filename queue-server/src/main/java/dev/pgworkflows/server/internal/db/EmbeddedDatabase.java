package dev.pgworkflows.server.internal.db;

import dev.pgworkflows.engine.internal.db.ConnectionInfo;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL 18 started by the server itself, its data kept under the data directory. It is
 * durable: a commit it acknowledged is on disk. Only the server stops it, after its requests (see
 * {@link #close}); one a killed server left running is stopped and started afresh ({@link
 * PostmasterPid}). One server at a time holds a data directory.
 *
 * <p>It asks every connection for a password ({@code scram-sha-256}, see {@link EmbeddedPassword}),
 * which the server generates at first start and keeps in {@code <WORKFLOWS_DATA_DIR>/pg-password},
 * readable by its owner only.
 */
public final class EmbeddedDatabase implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedDatabase.class);

  /**
   * zonky starts PostgreSQL with {@code -F} (fsync off) and {@code synchronous_commit=off}, for
   * tests. These come after {@code -F} on its command line and win: each commit waits until its WAL
   * is flushed to disk, and a page torn by a crash can be restored.
   */
  private static final Map<String, String> DURABLE =
      Map.of("fsync", "on", "synchronous_commit", "on", "full_page_writes", "on");

  /** Crash recovery of a large WAL may take a while; zonky waits 10 s by default. */
  private static final Duration STARTUP_WAIT = Duration.ofSeconds(60);

  private static final String SUPERUSER = "postgres";

  /** How long a reloaded pg_hba.conf may take to apply (the reload is a signal, answered soon). */
  private static final Duration RELOAD_WAIT = Duration.ofSeconds(10);

  private final EmbeddedPostgres postgres;
  private final Path pgData;
  private final FileChannel lock;
  private final String password;

  private EmbeddedDatabase(
      EmbeddedPostgres postgres, Path pgData, FileChannel lock, String password) {
    this.postgres = postgres;
    this.pgData = pgData;
    this.lock = lock;
    this.password = password;
  }

  /** Starts (initialising on first use) the database in {@code dataDir/postgres}. */
  public static EmbeddedDatabase start(Path dataDir, int port) {
    Path root = dataDir.toAbsolutePath().normalize();
    Path pgData = root.resolve("postgres");
    Path passwordFile = root.resolve(EmbeddedPassword.FILE_NAME);
    FileChannel lock = null;
    try {
      Files.createDirectories(pgData);
      lock = lock(root.resolve("server.lock"));
      PostmasterPid.stopLeftRunning(pgData);
      boolean initialised = Files.exists(pgData.resolve("postgresql.conf"));
      // Made before passwords: anyone local could connect; upgraded below, once started.
      boolean trusting = initialised && EmbeddedPassword.hbaTrusts(pgData);
      if (initialised && !trusting && !Files.exists(passwordFile)) {
        throw new IllegalStateException(
            "the embedded PostgreSQL in "
                + pgData
                + " asks for a password, and "
                + passwordFile
                + ", which held it, is gone: restore the file, or set the method of every rule in "
                + pgData.resolve("pg_hba.conf")
                + " to trust and start the server once (it sets a new password)");
      }
      String password = EmbeddedPassword.readOrCreate(passwordFile);
      EmbeddedPostgres.Builder builder =
          EmbeddedPostgres.builder()
              .setDataDirectory(pgData)
              .setCleanDataDirectory(false)
              .setPort(port)
              .setPGStartupWait(STARTUP_WAIT)
              // zonky's hook would stop PostgreSQL as the JVM begins to exit, while the server's
              // requests still drain; the server stops it itself, last.
              .setRegisterShutdownHook(false)
              .setServerConfig("max_connections", "200")
              .setServerConfig("password_encryption", EmbeddedPassword.METHOD)
              // Options of initdb, which runs only for a new data directory: it sets the
              // superuser's password from the file and writes scram-sha-256 rules (this --auth
              // comes after zonky's "-A trust" and wins), so the database never trusts anyone.
              .setLocaleConfig("auth", EmbeddedPassword.METHOD)
              .setLocaleConfig("pwfile", passwordFile.toString())
              // zonky's own connections: its check that PostgreSQL is up, getPostgresDatabase().
              .setConnectConfig("password", password);
      DURABLE.forEach(builder::setServerConfig);
      EmbeddedPostgres pg = start(builder, passwordFile, pgData);
      checkItIsOurs(pg, pgData);
      if (trusting) {
        requirePassword(pg, pgData, password, passwordFile);
      }
      log.info(
          "embedded PostgreSQL is at 127.0.0.1:{} with its data in {}; it asks every connection"
              + " for the password in {}; connect with:"
              + " PGPASSWORD=$(cat {}) psql -h 127.0.0.1 -p {} -U postgres postgres",
          pg.getPort(),
          pgData,
          passwordFile,
          passwordFile,
          pg.getPort());
      return new EmbeddedDatabase(pg, pgData, lock, password);
    } catch (IOException e) {
      release(lock);
      throw new UncheckedIOException("could not start embedded PostgreSQL in " + pgData, e);
    } catch (RuntimeException e) {
      release(lock);
      throw e;
    }
  }

  /** zonky's start, which fails after its wait when PostgreSQL refuses the password. */
  private static EmbeddedPostgres start(
      EmbeddedPostgres.Builder builder, Path passwordFile, Path pgData) throws IOException {
    try {
      return builder.start();
    } catch (IOException e) {
      for (Throwable c = e; c != null; c = c.getCause()) {
        if (c instanceof SQLException sql && "28P01".equals(sql.getSQLState())) {
          throw new IllegalStateException(
              "embedded PostgreSQL refused the password in "
                  + passwordFile
                  + ": it is not the password of the data directory "
                  + pgData
                  + ", or another PostgreSQL has the port (set WORKFLOWS_EMBEDDED_PG_PORT to a free"
                  + " one)",
              e);
        }
      }
      throw e;
    }
  }

  /**
   * Upgrades a data directory made before passwords, whose rules trust every local connection: sets
   * the superuser's password (hashed by the driver: the password itself never reaches the server),
   * rewrites the {@code trust} rules to {@code scram-sha-256}, reloads them, and waits until a
   * connection without the password is refused.
   */
  private static void requirePassword(
      EmbeddedPostgres pg, Path pgData, String password, Path passwordFile) throws IOException {
    log.warn(
        "the embedded PostgreSQL in {} was made before it asked for a password: every local user"
            + " could connect as its superuser. Setting a password, kept in {}, and asking every"
            + " connection for it from now on",
        pgData,
        passwordFile);
    try (Connection c = pg.getPostgresDatabase().getConnection()) {
      c.unwrap(PGConnection.class)
          .alterUserPassword(SUPERUSER, password.toCharArray(), EmbeddedPassword.METHOD);
      EmbeddedPassword.requirePasswordInHba(pgData);
      try (Statement s = c.createStatement()) {
        s.execute("select pg_reload_conf()");
      }
    } catch (SQLException e) {
      pg.close();
      throw new IllegalStateException(
          "could not set the embedded PostgreSQL's password: " + e.getMessage(), e);
    }
    long deadline = System.nanoTime() + RELOAD_WAIT.toNanos();
    while (true) {
      if (!letsInWithoutPassword(pg)) {
        log.info("embedded PostgreSQL in {} now asks every connection for a password", pgData);
        return;
      }
      // The reload has not applied yet.
      if (System.nanoTime() > deadline) {
        pg.close();
        throw new IllegalStateException(
            "embedded PostgreSQL still lets connections in without a password after its"
                + " pg_hba.conf was rewritten; see "
                + pgData.resolve("pg_hba.conf"));
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        pg.close();
        throw new IllegalStateException("interrupted while upgrading embedded PostgreSQL", e);
      }
    }
  }

  private static boolean letsInWithoutPassword(EmbeddedPostgres pg) {
    try {
      DriverManager.getConnection(pg.getJdbcUrl(SUPERUSER, "postgres")).close();
      return true;
    } catch (SQLException e) {
      return false;
    }
  }

  /**
   * zonky waits until something answers on the port, and takes it for the PostgreSQL it started:
   * another one on that port would pass.
   */
  private static void checkItIsOurs(EmbeddedPostgres pg, Path pgData) throws IOException {
    String dir;
    try (Connection c = pg.getPostgresDatabase().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("select current_setting('data_directory')")) {
      rs.next();
      dir = rs.getString(1);
    } catch (SQLException e) {
      pg.close();
      throw new IllegalStateException("embedded PostgreSQL does not answer: " + e.getMessage(), e);
    }
    if (!sameDirectory(Path.of(dir), pgData)) {
      pg.close();
      throw new IllegalStateException(
          "the PostgreSQL on port "
              + pg.getPort()
              + " keeps its data in "
              + dir
              + ", not in "
              + pgData
              + ": another PostgreSQL has the port; set WORKFLOWS_EMBEDDED_PG_PORT to a free one");
    }
  }

  private static boolean sameDirectory(Path a, Path b) {
    try {
      return Files.isSameFile(a, b);
    } catch (IOException e) {
      return false; // one of them is not there: not the same
    }
  }

  /** Holds {@code file} locked while the server runs; the lock goes with the process. */
  private static FileChannel lock(Path file) throws IOException {
    FileChannel channel =
        FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock held;
    try {
      held = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      held = null; // a server in this JVM holds it
    }
    if (held == null) {
      channel.close();
      throw new IllegalStateException(
          "another pgworkflows server is using the data directory "
              + file.getParent()
              + " (it holds "
              + file
              + "); give each server its own WORKFLOWS_DATA_DIR");
    }
    return channel;
  }

  private static void release(FileChannel lock) {
    if (lock != null) {
      try {
        lock.close();
      } catch (IOException e) {
        log.debug("could not release the data directory's lock: {}", e.getMessage());
      }
    }
  }

  public String jdbcUrl() {
    return postgres.getJdbcUrl("postgres", "postgres");
  }

  public int port() {
    return postgres.getPort();
  }

  /** The URL with the superuser and its password, for the pool and the LISTEN connection. */
  public ConnectionInfo connectionInfo() {
    return new ConnectionInfo(jdbcUrl(), Optional.of(SUPERUSER), Optional.of(password));
  }

  public Path dataDir() {
    return pgData;
  }

  /**
   * Stops PostgreSQL with a fast shutdown (sessions still open are ended, a checkpoint written) and
   * waits until it has gone. Call it after the pool and every other connection closed.
   */
  @Override
  public void close() {
    Optional<ProcessHandle> postmaster = PostmasterPid.running(pgData);
    try {
      postgres.close();
    } catch (IOException e) {
      log.warn("embedded PostgreSQL did not stop cleanly: {}", e.getMessage());
    }
    // pg_ctl gives up after 5 s; a longer checkpoint goes on, and is waited for here.
    boolean gone =
        postmaster
            .map(p -> p.onExit().completeOnTimeout(null, 60, TimeUnit.SECONDS).join() != null)
            .orElse(true);
    if (gone && PostmasterPid.running(pgData).isEmpty()) {
      log.info("embedded PostgreSQL stopped");
    } else {
      log.warn(
          "embedded PostgreSQL on {} is still stopping; the next server on it stops it", pgData);
    }
    release(lock);
  }
}
