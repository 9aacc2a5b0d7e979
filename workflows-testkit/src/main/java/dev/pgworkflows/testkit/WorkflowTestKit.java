package dev.pgworkflows.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.engine.internal.schedule.Cron;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.server.QueueServer;
import dev.pgworkflows.server.ServerConfig;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.WorkflowClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * A real server on a throwaway embedded PostgreSQL, in your test's JVM:
 *
 * <pre>{@code
 * try (WorkflowTestKit kit = WorkflowTestKit.start()) {
 *   Worker worker = onboard.serve(kit.workerOptions());
 *   long run = kit.client().start("onboard-user", signup).runId();
 *   kit.advanceTime(Duration.ofDays(7));   // a 7-day wait times out now
 * }
 * }</pre>
 *
 * <p>The server checks tokens and scopes as a production one does, with a token per {@link Role}:
 * {@link #workerOptions()} carry the worker's, {@link #client()} the application's (start and
 * read), {@code client(Role.ADMIN)} the operator's (cancel too). A test that cancels with the
 * application's client gets the 403 production would give.
 *
 * <p>The server exports no traces, whatever the test JVM's {@code OTEL_*} settings: only the
 * command-line server reads those.
 */
public final class WorkflowTestKit implements AutoCloseable {
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Who calls the server, each with a token of its own. */
  public enum Role {
    /** A worker: the worker protocol (scope {@code worker}). */
    WORKER("worker"),
    /** An application: starts, signals, reads runs (scopes {@code start} and {@code read}). */
    CLIENT("start,read"),
    /** An operator: every scope, cancel and purge included. */
    ADMIN("read,start,worker,admin");

    private final String scopes;

    Role(String scopes) {
      this.scopes = scopes;
    }
  }

  private final QueueServer server;
  private final Path dataDir;
  private final Map<Role, String> tokens;

  /** The pool of {@link #dataSource()}; null until it is asked for. */
  private HikariDataSource pool;

  private WorkflowTestKit(QueueServer server, Path dataDir, Map<Role, String> tokens) {
    this.server = server;
    this.dataDir = dataDir;
    this.tokens = tokens;
  }

  /** Starts PostgreSQL and the server on free ports. */
  public static WorkflowTestKit start() {
    try {
      Path dir = Files.createTempDirectory("pgworkflows-testkit");
      Map<Role, String> tokens = new EnumMap<>(Role.class);
      StringBuilder configured = new StringBuilder();
      for (Role role : Role.values()) {
        byte[] random = new byte[16];
        RANDOM.nextBytes(random);
        tokens.put(role, HexFormat.of().formatHex(random));
        configured
            .append("kit-")
            .append(role.name().toLowerCase(Locale.ROOT))
            .append(':')
            .append(role.scopes)
            .append('=')
            .append(tokens.get(role))
            .append(';');
      }
      ServerConfig config =
          ServerConfig.from(
              Map.of(
                  "WORKFLOWS_PORT", "0",
                  "WORKFLOWS_EMBEDDED_PG_PORT", "0",
                  "WORKFLOWS_DATA_DIR", dir.toString(),
                  "WORKFLOWS_FALLBACK_POLL_MS", "200",
                  "WORKFLOWS_DEADLINE_INTERVAL_MS", "100",
                  "WORKFLOWS_API_TOKENS", configured.toString()));
      return new WorkflowTestKit(QueueServer.start(config), dir, Map.copyOf(tokens));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String url() {
    return "http://localhost:" + server.port();
  }

  /** The bearer token of {@code role}, for calls of your own (a raw HTTP request, say). */
  public String token(Role role) {
    return tokens.get(role);
  }

  /**
   * The server's database, for an application's own connections beside the server's (its tables,
   * and runs started in its own transactions): the embedded PostgreSQL's superuser and password.
   */
  public Database database() {
    try {
      String password = Files.readString(dataDir.resolve("pg-password")).strip();
      return new Database(server.jdbcUrl(), "postgres", password);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Where the server's database is and who connects to it, as a DataSource takes them. */
  public record Database(String jdbcUrl, String user, String password) {
    /** Without the password, which has no business in a log. */
    @Override
    public String toString() {
      return "Database[jdbcUrl=" + jdbcUrl + ", user=" + user + "]";
    }
  }

  /**
   * A pool over the server's database, for workers and clients that work with no server between
   * them and it ({@code WorkerOptions.dataSource(kit.dataSource())}, {@code
   * WorkflowClient.connect(kit.dataSource())}): the engine in the test's JVM, beside the server, on
   * the same runs. Made on first use; closed with the kit.
   */
  public synchronized DataSource dataSource() {
    if (pool == null) {
      Database db = database();
      HikariConfig c = new HikariConfig();
      c.setJdbcUrl(db.jdbcUrl());
      c.setUsername(db.user());
      c.setPassword(db.password());
      c.setMaximumPoolSize(8);
      c.setPoolName("testkit-jdbc");
      pool = new HikariDataSource(c);
    }
    return pool;
  }

  /**
   * Worker options with no server between the worker and the database (see {@link #dataSource()}).
   */
  public WorkerOptions jdbcWorkerOptions() {
    return WorkerOptions.dataSource(dataSource());
  }

  /** A client as an application has one: it may start, signal and read runs, not cancel them. */
  public WorkflowClient client() {
    return client(Role.CLIENT);
  }

  /** A client with {@code role}'s token: {@code client(Role.ADMIN)} may cancel. */
  public WorkflowClient client(Role role) {
    return WorkflowClient.connect(url(), token(role));
  }

  /**
   * Worker options for this server with the worker's token and a short poll wait, so workers stop
   * promptly.
   */
  public WorkerOptions workerOptions() {
    return WorkerOptions.url(url()).token(token(Role.WORKER)).pollWait(Duration.ofSeconds(1));
  }

  /**
   * Moves every pending workflow timer (sleeps, wait timeouts, retry backoffs, delayed and
   * debounced starts, run deadlines) {@code by} closer, then wakes the workers. Timers that become
   * due run at once; a run whose deadline has passed is timed out within a tenth of a second.
   */
  public void advanceTime(Duration by) {
    try (Connection c = server.connectToDatabase()) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "UPDATE queue.workflow_run SET deadline_at = deadline_at - make_interval(secs => ?),"
                  + " due_at = due_at - make_interval(secs => ?)"
                  + " WHERE status = 'running' AND (deadline_at IS NOT NULL OR due_at IS NOT NULL)")) {
        ps.setDouble(1, by.toMillis() / 1000.0);
        ps.setDouble(2, by.toMillis() / 1000.0);
        ps.executeUpdate();
      }
      List<String> queues = new ArrayList<>();
      // Every workflow's queue: its name begins with the prefix ("_" escaped for LIKE).
      try (PreparedStatement ps =
          c.prepareStatement("SELECT queue_name FROM queue.queue_meta WHERE queue_name LIKE ?")) {
        ps.setString(1, Names.WORKFLOW_QUEUE_PREFIX.replace("_", "\\_") + "%");
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            queues.add(rs.getString(1));
          }
        }
      }
      for (String q : queues) {
        try (PreparedStatement ps =
            c.prepareStatement(
                "UPDATE queue."
                    + quote("q_" + q)
                    + " SET vt = vt - make_interval(secs => ?) WHERE vt > clock_timestamp()")) {
          ps.setDouble(1, by.toMillis() / 1000.0);
          ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify('queue_wakeup', ?)")) {
          ps.setString(1, q);
          ps.execute();
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not advance time: " + e.getMessage(), e);
    }
  }

  /**
   * Runs schedule {@code name}'s next tick now, as the server does when its time comes (the run's
   * input carries that tick as {@code scheduledAt}), and moves the schedule to the tick after.
   * Answers the run's id. Schedules tick on the server's clock, which {@link #advanceTime} does not
   * move: this is how a test gets a scheduled run without waiting for it.
   */
  public long runSchedule(String name) {
    try (Connection c = server.connectToDatabase()) {
      String cron;
      String zone;
      Instant tick;
      try (PreparedStatement ps =
          c.prepareStatement("SELECT cron, zone, next_tick FROM queue.schedule_get(?)")) {
        ps.setString(1, name);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next() || rs.getObject(3) == null) {
            throw new IllegalArgumentException(
                "schedule " + name + " does not exist or has no next tick");
          }
          cron = rs.getString(1);
          zone = rs.getString(2);
          tick = rs.getObject(3, OffsetDateTime.class).toInstant();
        }
      }
      Instant after = Cron.parse(cron, zone).next(tick).orElse(null);
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT run_id FROM queue.schedule_fire(?, ?, ARRAY[?]::timestamptz[], ?)")) {
        OffsetDateTime at = tick.atOffset(ZoneOffset.UTC);
        ps.setString(1, name);
        ps.setObject(2, at);
        ps.setObject(3, at);
        ps.setObject(4, after == null ? null : after.atOffset(ZoneOffset.UTC));
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            throw new IllegalStateException("schedule " + name + " is paused or ticked meanwhile");
          }
          return rs.getLong(1);
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not run schedule " + name + ": " + e.getMessage(), e);
    }
  }

  private static String quote(String identifier) {
    return "\"" + identifier.replace("\"", "\"\"") + "\"";
  }

  @Override
  public void close() {
    synchronized (this) {
      if (pool != null) {
        pool.close();
      }
    }
    server.close();
    try (Stream<Path> files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // a temp directory; the OS cleans up eventually
    }
  }
}
