package dev.pgworkflows.workflows;

import dev.pgworkflows.engine.internal.host.EngineCore;
import dev.pgworkflows.sql.Migrator;
import dev.pgworkflows.workflows.internal.jdbc.EngineLibrary;
import dev.pgworkflows.workflows.internal.jdbc.LocalEngines;
import dev.pgworkflows.workflows.internal.sql.SchemaVersion;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * Durable workflows in this process, over your own PostgreSQL, with no server to run: the engine
 * works over connections from your {@link DataSource}, your workflows are served by workers in this
 * JVM, and the background jobs (deadlines, schedules, retention, webhook delivery) run here too, in
 * one process per database at a time (the holder of an advisory lock; when it stops, another takes
 * over within seconds).
 *
 * <pre>{@code
 * try (PgWorkflows pgw = PgWorkflows.start(dataSource)) {
 *   pgw.serve(onboardUser);
 *   long runId = pgw.client().start(onboardUser, "ada@example.com").runId();
 *   String userId = pgw.client().runs().awaitResult("onboard-user", runId, String.class, timeout);
 * }
 * }</pre>
 *
 * <p>A server on the same database sees these runs and workers as its own (its dashboard, {@code
 * pgw}, its REST API), and workers of both kinds may serve one workflow side by side.
 */
public final class PgWorkflows implements AutoCloseable {
  private final DataSource dataSource;
  private final EngineCore engine;
  private WorkflowClient client; // guarded by this; made on first use
  private final List<Worker> workers = new ArrayList<>();
  private boolean closed; // guarded by this

  private final OpenTelemetry openTelemetry;

  private PgWorkflows(DataSource dataSource, OpenTelemetry openTelemetry) {
    this.dataSource = dataSource;
    this.openTelemetry = openTelemetry;
    this.engine = LocalEngines.acquire(dataSource, SchemaVersion.Side.WORKER, openTelemetry);
  }

  /** Migrates the database's schema to this version (when it is older) and starts the engine. */
  public static PgWorkflows start(DataSource dataSource) {
    return builder(dataSource).start();
  }

  public static Builder builder(DataSource dataSource) {
    if (dataSource == null) {
      throw new IllegalArgumentException("dataSource must not be null");
    }
    EngineLibrary.require();
    return new Builder(dataSource);
  }

  /** How the engine starts. */
  public static final class Builder {
    private final DataSource dataSource;
    private boolean migrate = true;
    private OpenTelemetry openTelemetry = GlobalOpenTelemetry.get();

    private Builder(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    /**
     * Whether {@link #start()} migrates the schema first (default true). Off, the schema must be at
     * this version already (migrated by a server, or by a deploy step): otherwise start throws
     * {@link QueueSchemaException} naming both versions.
     */
    public Builder migrate(boolean migrate) {
      this.migrate = migrate;
      return this;
    }

    /**
     * Where the engine sends its run spans (the {@code workflow.run} span of each run, parent of
     * the workers' step spans), and the default of the workers this serves; unset, {@code
     * GlobalOpenTelemetry}. An engine already running over this DataSource in this process keeps
     * its own.
     */
    public Builder openTelemetry(OpenTelemetry openTelemetry) {
      if (openTelemetry == null) {
        throw new IllegalArgumentException("openTelemetry must not be null");
      }
      this.openTelemetry = openTelemetry;
      return this;
    }

    public PgWorkflows start() {
      if (migrate) {
        try {
          new Migrator(dataSource).migrate();
        } catch (SQLException e) {
          throw new WorkflowException("could not migrate the database: " + e.getMessage(), e);
        }
      }
      return new PgWorkflows(dataSource, openTelemetry);
    }
  }

  /** Serves {@code workflow} in this process with the default options over this database. */
  public synchronized Worker serve(Workflow<?, ?> workflow) {
    return serve(workflow, WorkerOptions.dataSource(dataSource).openTelemetry(openTelemetry));
  }

  /**
   * Serves {@code workflow} with {@code options}, which must be {@link WorkerOptions#dataSource}
   * options over this database. The worker closes with this.
   */
  public synchronized Worker serve(Workflow<?, ?> workflow, WorkerOptions options) {
    if (closed) {
      throw new IllegalStateException("closed");
    }
    if (options.dataSource() != dataSource) {
      throw new IllegalArgumentException(
          "options must be WorkerOptions.dataSource(...) over this PgWorkflows' DataSource");
    }
    Worker w = workflow.serve(options);
    workers.add(w);
    return w;
  }

  /** The database this engine works over. */
  public DataSource dataSource() {
    return dataSource;
  }

  /**
   * A client over this database: starts, signals, reads, awaits and cancels runs. Made on first
   * use, so a login that only serves workflows (the role pgworkflows_worker) needs no client's
   * grants.
   */
  public synchronized WorkflowClient client() {
    if (closed) {
      throw new IllegalStateException("this PgWorkflows is closed");
    }
    if (client == null) {
      client = WorkflowClient.connect(dataSource);
    }
    return client;
  }

  /** Whether this process runs the database's background jobs now (it holds the lead). */
  public boolean leadsBackgroundJobs() {
    return engine.leadership().leading();
  }

  /** Stops the workers (each finishing its steps in flight, as {@link Worker#close} does). */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (Worker w : workers) {
      try {
        w.close();
      } catch (RuntimeException e) {
        // the others still close
      }
    }
    if (client != null) {
      client.close();
    }
    LocalEngines.release(dataSource);
  }
}
