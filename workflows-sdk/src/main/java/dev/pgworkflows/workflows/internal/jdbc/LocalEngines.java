package dev.pgworkflows.workflows.internal.jdbc;

import dev.pgworkflows.engine.Engine;
import dev.pgworkflows.engine.internal.host.EngineCore;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.sql.SchemaVersion;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.IdentityHashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The engine of this process over each database it reaches without a server: one per {@link
 * DataSource}, shared by every worker and client over it, started by the first to ask and closed
 * when the last lets go. Each one listens for wake-ups, records the workers it serves, and bids for
 * the lead of the background jobs (one process a database runs them).
 */
public final class LocalEngines {
  private record Held(EngineCore core, int users) {}

  private static final Map<DataSource, Held> engines = new IdentityHashMap<>();

  private LocalEngines() {}

  /**
   * The engine over {@code dataSource}, started when it was not; throws {@link
   * dev.pgworkflows.workflows.QueueSchemaException} when the database's schema is not the one this
   * version knows, and {@link dev.pgworkflows.workflows.MissingGrantException} when the login may
   * not call what {@code side} calls.
   */
  public static EngineCore acquire(DataSource dataSource, SchemaVersion.Side side) {
    return acquire(dataSource, side, GlobalOpenTelemetry.get());
  }

  /**
   * As {@link #acquire(DataSource, SchemaVersion.Side)}; an engine started by this call sends its
   * run spans to {@code openTelemetry} (one already running keeps its own).
   */
  public static synchronized EngineCore acquire(
      DataSource dataSource, SchemaVersion.Side side, OpenTelemetry openTelemetry) {
    try (Connection c = dataSource.getConnection()) {
      SchemaVersion.require(c, side);
    } catch (SQLException e) {
      throw new ServerUnavailableException(
          "could not reach the database to check its schema: " + e.getMessage(), e);
    }
    Held held = engines.get(dataSource);
    if (held == null) {
      EngineCore core = EngineCore.overDataSource(dataSource, openTelemetry, Engine::processId);
      try {
        core.start();
      } catch (RuntimeException e) {
        core.close();
        throw e;
      }
      held = new Held(core, 0);
    }
    engines.put(dataSource, new Held(held.core(), held.users() + 1));
    return held.core();
  }

  /** Lets go of the engine over {@code dataSource}; the last to let go closes it. */
  public static synchronized void release(DataSource dataSource) {
    Held held = engines.get(dataSource);
    if (held == null) {
      return;
    }
    if (held.users() <= 1) {
      engines.remove(dataSource);
      held.core().close();
    } else {
      engines.put(dataSource, new Held(held.core(), held.users() - 1));
    }
  }
}
