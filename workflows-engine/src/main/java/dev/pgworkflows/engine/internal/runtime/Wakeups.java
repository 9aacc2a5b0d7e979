package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.host.ConnectionSource;
import dev.pgworkflows.engine.internal.host.Sessions;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.Consumer;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one LISTEN connection of this process. Each notification on {@code queue_wakeup} names a
 * queue with newly visible messages (sent by any server on the database); it is handed to the
 * consumer. When the connection dies it reconnects with backoff, re-listens, and reports a
 * reconnect so the caller can wake everything that may have missed a notification meanwhile.
 *
 * <p>The connection idles legitimately, so no socket timeout guards it; instead, after {@link
 * #CHECK_AFTER_MS} without a notification it must answer an empty query within {@link
 * #CHECK_TIMEOUT_MS}. A connection the network silently dropped (no RST ever comes) is thus found
 * out within their sum and replaced, instead of listening to nothing for hours.
 */
public final class Wakeups implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Wakeups.class);
  public static final String CHANNEL = "queue_wakeup";
  public static final String APPLICATION_NAME = "pgworkflows-listener";
  static final long CHECK_AFTER_MS = 5_000;
  static final int CHECK_TIMEOUT_MS = 5_000;

  private final ConnectionSource db;
  private final Consumer<String> onNotify;
  private final Runnable onReconnect;
  private final Thread thread;
  private volatile boolean running = true;
  private volatile boolean connected;
  private volatile Connection connection;

  public Wakeups(ConnectionSource db, Consumer<String> onNotify, Runnable onReconnect) {
    this.db = db;
    this.onNotify = onNotify;
    this.onReconnect = onReconnect;
    this.thread = new Thread(this::run, "pg-listener");
    this.thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  public boolean connected() {
    return connected;
  }

  private void run() {
    long backoff = 100;
    boolean first = true;
    while (running) {
      Connection c = null;
      try {
        c = db.open();
        Sessions.name(c, APPLICATION_NAME);
        connection = c;
        try (Statement s = c.createStatement()) {
          s.execute("LISTEN " + CHANNEL);
        }
        connected = true;
        backoff = 100;
        if (!first) {
          log.info("LISTEN connection re-established");
          onReconnect.run();
        }
        first = false;
        PGConnection pg = c.unwrap(PGConnection.class);
        long lastHeard = System.nanoTime();
        while (running) {
          PGNotification[] batch = pg.getNotifications(1000);
          if (batch != null && batch.length > 0) {
            lastHeard = System.nanoTime();
            for (PGNotification n : batch) {
              onNotify.accept(n.getParameter());
            }
          } else if (System.nanoTime() - lastHeard > CHECK_AFTER_MS * 1_000_000) {
            // isValid runs an empty query under a network timeout of its own.
            if (!c.isValid(CHECK_TIMEOUT_MS / 1000)) {
              throw new SQLException(
                  "the LISTEN connection did not answer a check within "
                      + CHECK_TIMEOUT_MS
                      + " ms");
            }
            lastHeard = System.nanoTime();
          }
        }
      } catch (SQLException | RuntimeException e) {
        connected = false;
        if (!running) {
          return;
        }
        log.warn("LISTEN connection lost ({}); reconnecting in {} ms", e.getMessage(), backoff);
        first = false;
        sleep(backoff);
        backoff = Math.min(backoff * 2, 5_000);
      } finally {
        // A LISTEN must not live on in a pool's idle connection.
        Sessions.end(c);
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

  @Override
  public void close() {
    running = false;
    Sessions.end(connection);
    thread.interrupt();
  }
}
