package dev.pgworkflows.engine.internal.host;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One leader per database for the background jobs (retention sweep, schedule ticks, deadlines,
 * webhook delivery): the process whose session holds a PostgreSQL advisory lock. Every process that
 * hosts the engine tries for it; the one that gets it keeps its connection open, and the lock goes
 * with that session when the process ends or the connection breaks, so another takes over within
 * one {@link #RETRY_MS interval}.
 *
 * <p>The jobs run on {@link #scheduler()}: a scheduler whose periodic tasks do nothing while this
 * process does not lead, so no job needs to know of leadership.
 */
public final class Leadership implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Leadership.class);

  /** The advisory lock's key: "pgwflead" as a number, one per database. */
  public static final long LOCK_KEY = 0x7067_7766_6c65_6164L;

  static final long RETRY_MS = 2_000;

  /** How the leader's session is named in {@code pg_stat_activity}. */
  public static final String APPLICATION_NAME = "pgworkflows-leader";

  private final ConnectionSource connections;
  private final Thread thread;
  private final LeaderScheduler scheduler;
  private volatile boolean running = true;
  private volatile boolean leading;
  private volatile Connection held;

  public Leadership(ConnectionSource connections, ThreadFactory threads) {
    this.connections = connections;
    this.scheduler = new LeaderScheduler(2, threads, () -> leading);
    this.thread = new Thread(this::run, "pgw-leadership");
    this.thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  /** Whether this process leads now. */
  public boolean leading() {
    return leading;
  }

  /** Runs periodic tasks only while this process leads. */
  public ScheduledThreadPoolExecutor scheduler() {
    return scheduler;
  }

  private void run() {
    while (running) {
      Connection c = null;
      try {
        c = connections.open();
        Sessions.name(c, APPLICATION_NAME);
        keepAlive(c);
        held = c;
        while (running && !leading) {
          if (tryLock(c)) {
            leading = true;
            log.info("this process now runs the background jobs of its database");
          } else {
            sleep(RETRY_MS);
          }
        }
        // Lead while the session lives: a check now and then finds a broken connection.
        while (running) {
          sleep(RETRY_MS);
          if (!c.isValid(5)) {
            throw new SQLException("the leader's connection did not answer a check");
          }
        }
      } catch (SQLException | RuntimeException e) {
        if (leading) {
          log.warn("lost the lead of the background jobs ({})", e.getMessage());
        }
        leading = false;
        if (running) {
          sleep(RETRY_MS);
        }
      } finally {
        leading = false;
        held = null;
        // The lock goes with the session, which must not live on in a pool.
        Sessions.end(c);
      }
    }
  }

  /**
   * Has PostgreSQL probe the leader's connection and end its session within about half a minute of
   * the network dropping it: the lock goes with the session, and a leader cut off by a partition
   * must not keep every other process from leading for as long as the kernel's own keepalive
   * (hours) would.
   */
  private static void keepAlive(Connection c) throws SQLException {
    try (java.sql.Statement s = c.createStatement()) {
      s.execute(
          "SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5;"
              + " SET tcp_keepalives_count = 3; SET tcp_user_timeout = 25000");
    }
  }

  /**
   * Takes the lock when this session's role may run the jobs: a process whose login may only start
   * and read runs (the role pgworkflows_client of sql/roles.sql) never leads.
   */
  private static boolean tryLock(Connection c) throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT CASE WHEN has_function_privilege("
                + "'queue.workflow_expire(integer, timestamp with time zone)', 'EXECUTE')"
                + " THEN pg_try_advisory_lock(?) ELSE false END")) {
      s.setLong(1, LOCK_KEY);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getBoolean(1);
      }
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Gives the lead up (the session ends, and with it the lock) and stops the jobs. */
  @Override
  public void close() {
    running = false;
    leading = false;
    scheduler.shutdownNow();
    thread.interrupt();
    Sessions.end(held);
  }
}
