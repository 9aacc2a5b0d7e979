package dev.pgworkflows.engine;

import dev.pgworkflows.engine.internal.host.EngineCore;
import io.opentelemetry.api.OpenTelemetry;
import java.net.InetAddress;
import java.net.UnknownHostException;
import javax.sql.DataSource;

/**
 * The engine over a database, hosted by this process with no server and no workflows of its own: it
 * listens for wake-ups, and bids for the lead of the database's background jobs (deadlines,
 * schedules, retention, webhook delivery), which run in one process per database at a time. A
 * process that serves workflows has it already ({@code PgWorkflows} in {@code workflows-sdk}, or a
 * server); this is for one that only keeps the jobs running, such as a small sidecar beside
 * applications whose workers come and go.
 *
 * <p>The schema must be at this version (see {@code dev.pgworkflows.sql.Migrator}).
 */
public final class Engine implements AutoCloseable {
  private final EngineCore core;

  private Engine(EngineCore core) {
    this.core = core;
  }

  /** Starts the engine over connections from {@code dataSource}. */
  public static Engine start(DataSource dataSource) {
    if (dataSource == null) {
      throw new IllegalArgumentException("dataSource must not be null");
    }
    EngineCore core =
        EngineCore.overDataSource(dataSource, OpenTelemetry.noop(), Engine::processId);
    try {
      return new Engine(core.start());
    } catch (RuntimeException e) {
      core.close();
      throw e;
    }
  }

  /** Whether this process runs the database's background jobs now (it holds the lead). */
  public boolean leadsBackgroundJobs() {
    return core.leadership().leading();
  }

  /** Gives the lead up (another process takes it within seconds) and stops listening. */
  @Override
  public void close() {
    core.close();
  }

  /** How the workers listing names a process hosting the engine: its host name and process id. */
  public static String processId() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "localhost";
    }
    return host + ":" + ProcessHandle.current().pid();
  }
}
