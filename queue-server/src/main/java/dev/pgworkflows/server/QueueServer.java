package dev.pgworkflows.server;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.engine.internal.db.ConnectionInfo;
import dev.pgworkflows.engine.internal.db.Durability;
import dev.pgworkflows.engine.internal.host.EngineCore;
import dev.pgworkflows.engine.internal.maintenance.HttpDelivery;
import dev.pgworkflows.engine.internal.maintenance.WebhookTargets;
import dev.pgworkflows.engine.internal.runtime.LongPoll;
import dev.pgworkflows.engine.internal.runtime.StateWaits;
import dev.pgworkflows.engine.internal.runtime.StreamFollowers;
import dev.pgworkflows.engine.internal.runtime.TaskStreams;
import dev.pgworkflows.engine.internal.runtime.Timers;
import dev.pgworkflows.engine.internal.runtime.Wakeups;
import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.engine.internal.runtime.WorkflowEvents;
import dev.pgworkflows.engine.internal.store.AuditStore;
import dev.pgworkflows.engine.internal.store.BlockerStore;
import dev.pgworkflows.engine.internal.store.OperationsStore;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.store.RunStreamStore;
import dev.pgworkflows.engine.internal.store.ScheduleStore;
import dev.pgworkflows.engine.internal.store.Sql;
import dev.pgworkflows.engine.internal.store.TaskStore;
import dev.pgworkflows.engine.internal.store.TopicStore;
import dev.pgworkflows.server.internal.audit.AuditTrail;
import dev.pgworkflows.server.internal.db.EmbeddedDatabase;
import dev.pgworkflows.server.internal.db.Pool;
import dev.pgworkflows.server.internal.http.AuditRoutes;
import dev.pgworkflows.server.internal.http.Auth;
import dev.pgworkflows.server.internal.http.BlockerRoutes;
import dev.pgworkflows.server.internal.http.ChainRoutes;
import dev.pgworkflows.server.internal.http.ChildRoutes;
import dev.pgworkflows.server.internal.http.CompletionRoutes;
import dev.pgworkflows.server.internal.http.Exposure;
import dev.pgworkflows.server.internal.http.FlowRoutes;
import dev.pgworkflows.server.internal.http.GroupRoutes;
import dev.pgworkflows.server.internal.http.HealthRoutes;
import dev.pgworkflows.server.internal.http.JournalRoutes;
import dev.pgworkflows.server.internal.http.JournalTailRoutes;
import dev.pgworkflows.server.internal.http.LeaseRoutes;
import dev.pgworkflows.server.internal.http.MessageRoutes;
import dev.pgworkflows.server.internal.http.OperatorAudit;
import dev.pgworkflows.server.internal.http.PollRoutes;
import dev.pgworkflows.server.internal.http.QueueRoutes;
import dev.pgworkflows.server.internal.http.RouteScopes;
import dev.pgworkflows.server.internal.http.RunControlRoutes;
import dev.pgworkflows.server.internal.http.RunRoutes;
import dev.pgworkflows.server.internal.http.RunStreamRoutes;
import dev.pgworkflows.server.internal.http.ScheduleRoutes;
import dev.pgworkflows.server.internal.http.StartRoutes;
import dev.pgworkflows.server.internal.http.StateRoutes;
import dev.pgworkflows.server.internal.http.StreamRoutes;
import dev.pgworkflows.server.internal.http.TopicRoutes;
import dev.pgworkflows.server.internal.http.UiRoutes;
import dev.pgworkflows.server.internal.http.WebServer;
import dev.pgworkflows.server.internal.http.WorkerRoutes;
import dev.pgworkflows.server.internal.telemetry.Metrics;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import dev.pgworkflows.sql.Migrator;
import io.javalin.Javalin;
import io.javalin.config.RoutesConfig;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server process: database (given or embedded), migrations, the REST API, the LISTEN connection
 * with the long-poll registry, and background workers. Stateless apart from waiters: any number of
 * servers may share one database.
 */
public final class QueueServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(QueueServer.class);

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private StreamFollowers streamFollowers; // set by the builder
  private Javalin app;
  private TaskStreams streams;
  private LongPoll longPoll;
  private ConnectionInfo connectionInfo;
  private Durability durability;
  private Thread stopAtExit;
  private boolean closed; // guarded by this
  private WebhookTargets.Resolver webhookResolver = InetAddress::getAllByName;

  private QueueServer() {}

  /** The readers following streams here (a test's view). */
  StreamFollowers streamFollowers() {
    return streamFollowers;
  }

  /** Starts a server; throws when the database cannot be reached or migrated. */
  public static QueueServer start(ServerConfig config) {
    return builder(config).start();
  }

  /** Starts a server that traces with the given OpenTelemetry (tests pass an in-memory one). */
  public static QueueServer start(ServerConfig config, OpenTelemetry otel) {
    return builder(config).openTelemetry(otel).start();
  }

  /** A server to start with more than its configuration: its tracing, its clock. */
  public static Builder builder(ServerConfig config) {
    return new Builder(config);
  }

  /** What a server is started with besides its configuration. */
  public static final class Builder {
    private final ServerConfig config;
    private OpenTelemetry otel;
    private Map<String, String> environment = Map.of();
    private InstantSource clock = InstantSource.system();
    private WebhookTargets.Resolver webhookResolver = InetAddress::getAllByName;
    private int maxFollowers = StreamFollowers.MAX_OPEN;
    private Duration maxFollowerAnswer = StreamFollowers.MAX_ANSWER;

    private Builder(ServerConfig config) {
      this.config = config;
    }

    /**
     * Traces with this OpenTelemetry; by default one configured from {@link #environment}, which
     * exports nothing unless that enables it.
     */
    public Builder openTelemetry(OpenTelemetry otel) {
      this.otel = otel;
      return this;
    }

    /**
     * Configures tracing from these variables (OTLP_*, OTEL_*); none by default, so a server
     * embedded in an application or a test exports nothing, whatever that process's own {@code
     * OTEL_*} settings (the command-line server passes its process's). Export is on only when these
     * enable it (an OTLP endpoint, {@code OTLP_ENABLED=true}, or {@code OTEL_TRACES_EXPORTER});
     * then their values win, the process's {@code OTEL_*} variables and {@code -Dotel.*} properties
     * fill in what they leave unset, the protocol is {@code http/protobuf} unless one is set, and
     * only traces are exported. Unused with {@link #openTelemetry}.
     */
    public Builder environment(Map<String, String> env) {
      this.environment = Map.copyOf(env);
      return this;
    }

    /**
     * Reads wall-clock time from {@code clock} (the system's by default): due times of timers,
     * webhook timestamps. Intervals are measured with {@link System#nanoTime()} whatever the clock,
     * and the database keeps its own.
     */
    public Builder clock(InstantSource clock) {
      this.clock = clock;
      return this;
    }

    /**
     * Looks webhook hosts up with {@code resolver} (the system's by default), at subscription and
     * before every delivery attempt; tests use it to make a name change what it points to.
     */
    public Builder webhookResolver(WebhookTargets.Resolver resolver) {
      this.webhookResolver = resolver;
      return this;
    }

    /**
     * Admits at most {@code maxOpen} readers following streams at once, each answer lasting at most
     * {@code maxAnswer} (100 and 5 minutes by default); tests make them small.
     */
    Builder streamFollowing(int maxOpen, Duration maxAnswer) {
      this.maxFollowers = maxOpen;
      this.maxFollowerAnswer = maxAnswer;
      return this;
    }

    public QueueServer start() {
      QueueServer s = new QueueServer();
      s.webhookResolver = webhookResolver;
      s.streamFollowers = new StreamFollowers(maxFollowers, maxFollowerAnswer);
      try {
        OpenTelemetry tracing = otel;
        if (tracing == null) {
          // The server's own, closed last: its final export holds the spans of the last requests.
          OpenTelemetrySdk own = Tracing.fromEnvironment(environment);
          s.closeables.add(own);
          tracing = own;
        }
        s.boot(config, tracing, clock);
        return s;
      } catch (RuntimeException e) {
        s.close();
        throw e;
      }
    }
  }

  private void boot(ServerConfig config, OpenTelemetry otel, InstantSource clock) {
    HikariDataSource pool = openDatabase(config);
    StreamFollowers followers = streamFollowers;
    // The counters are the engine's events; what they read of the engine is there once it is.
    EngineCore[] built = new EngineCore[1];
    Sql sql = new Sql(pool);
    Metrics metrics =
        new Metrics(sql, pool, () -> built[0] == null ? 0 : built[0].waiters().waiting());
    WorkflowEvents events = metrics;
    WebhookTargets webhookTargets = WebhookTargets.allowing(config.webhookAllow(), webhookResolver);
    int[] port = {0};
    EngineCore core =
        new EngineCore(
            pool,
            new EngineCore.Settings(
                config.maxRetentionDays(),
                config.workerExpiryMs(),
                config.fallbackPollMs(),
                config.sweeperIntervalMs(),
                config.scheduleIntervalMs(),
                config.deadlineIntervalMs(),
                config.dbStatementTimeoutMs(),
                new HttpDelivery.Settings(
                    config.deliveryMaxAttempts(),
                    Duration.ofMillis(config.deliveryTimeoutMs()),
                    Duration.ofMillis(config.deliveryBackoffMs())),
                webhookTargets,
                config.poolSize()),
            new EngineCore.Hooks(
                events,
                metrics,
                otel,
                clock,
                () -> serverId(port[0]),
                () -> connectionInfo.connect(Wakeups.APPLICATION_NAME),
                queue -> {
                  if (queue.startsWith(StreamFollowers.WAKEUP_PREFIX)) {
                    followers.wake(queue);
                  }
                },
                followers::wakeAll,
                followers::wake));
    built[0] = core;
    closeables.add(core);
    core.listen();
    longPoll = core.longPoll();

    Auth auth = new Auth(config.apiTokens());
    Exposure.announce(
        config.bind(),
        config.bindsLoopbackOnly(),
        config.apiTokens(),
        config.insecureNoAuth(),
        core.scheduler());
    AuditStore auditStore = new AuditStore(sql);
    AuditTrail audit = new AuditTrail(auditStore);
    audit.configured(config.apiTokens(), auth.presenceOnly());

    Tracing tracing = new Tracing(otel);
    RunStore runs = core.runs();
    TaskStore tasks = core.tasks();
    Timers timers = core.timers();
    StateWaits stateWaits = core.stateWaits();
    streams =
        new TaskStreams(tasks, longPoll, timers, clock, core.scheduler(), config.maxTaskStreams());
    WorkerCalls calls = core.calls();
    StartRoutes startRoutes = new StartRoutes(core.runCalls(), tracing);
    RunRoutes runRoutes = new RunRoutes(runs, core.runCalls(), tracing);
    OperationsStore operations = new OperationsStore(sql);
    List<Consumer<RoutesConfig>> routes =
        List.of(
            // The worker protocol's and the runs' routes, the busiest, first.
            new PollRoutes(calls)::register,
            new StreamRoutes(streams, core.versions(), core.sightings())::register,
            new CompletionRoutes(core.completions(), calls, streams, clock)::register,
            new LeaseRoutes(calls, streams)::register,
            new JournalTailRoutes(calls)::register,
            new JournalRoutes(calls)::register,
            new ChainRoutes(core.chainStore(), runs, calls, core.runCalls(), streams, tracing)
                ::register,
            runRoutes::registerIndex,
            startRoutes::register,
            runRoutes::register,
            new StateRoutes(runs, core.stateStore(), stateWaits)::register,
            new RunControlRoutes(operations, runs)::register,
            new ChildRoutes(calls, tracing)::register,
            new ScheduleRoutes(new ScheduleStore(sql), core.registrations(), clock)::register,
            new FlowRoutes(core.flowStore(), calls, core.registrations())::register,
            new HealthRoutes(sql, core::listening)::register,
            new UiRoutes()::register,
            metrics::register,
            new QueueRoutes(core.queues())::register,
            new MessageRoutes(core.queues(), longPoll, timers, clock)::register,
            new GroupRoutes(operations)::register,
            new TopicRoutes(new TopicStore(sql), core.delivery()::nudge, webhookTargets)::register,
            new BlockerRoutes(new BlockerStore(sql), config.workerExpiryMs())::register,
            new RunStreamRoutes(new RunStreamStore(sql), core.streamWrites(), followers)::register,
            new WorkerRoutes(core.workerStore(), config.workerExpiryMs())::register,
            new AuditRoutes(auditStore)::register);
    app =
        WebServer.start(
            config.bind(),
            config.port(),
            config.maxBodyBytes(),
            auth,
            new OperatorAudit(audit),
            metrics,
            tracing,
            routes);
    // Before anything else starts: a route without a scope, or an operator action without an
    // audit entry, must not go out (the boot fails and the server closes).
    RouteScopes.requireEvery(routes());
    OperatorAudit.requireEvery(routes());
    port[0] = app.port();
    core.start();
    log.info(
        "pgworkflows server listening on {}:{} (database: {})",
        config.bind(),
        app.port(),
        durability);
    if (!durability.flushesCommits()) {
      log.warn(
          "the database runs with {}: a write it acknowledged may be lost if its machine crashes",
          durability);
    }
  }

  /** The given database or an embedded one, migrated, and the pool onto it. */
  private HikariDataSource openDatabase(ServerConfig config) {
    if (config.databaseUrl().isPresent()) {
      connectionInfo =
          ConnectionInfo.parse(
              config.databaseUrl().get(), config.databaseUser(), config.databasePassword());
    } else {
      EmbeddedDatabase embedded =
          EmbeddedDatabase.start(config.dataDir(), config.embeddedPostgresPort());
      closeables.add(embedded);
      // As zonky's own hook did (it is off, see EmbeddedDatabase), but in order: a server never
      // closed (a test that forgets to) still stops its PostgreSQL as the JVM exits.
      stopAtExit = new Thread(this::close, "pgworkflows-stop");
      Runtime.getRuntime().addShutdownHook(stopAtExit);
      // Its superuser with the password it asks for (kept in the data directory's pg-password).
      connectionInfo = embedded.connectionInfo();
    }
    HikariDataSource pool =
        Pool.open(
            connectionInfo,
            config.poolSize(),
            config.dbStatementTimeoutMs(),
            config.dbSocketTimeoutMs());
    closeables.add(pool);
    try {
      // Not through the pool: a migration that rewrites a large table may rightly take longer
      // than the pool's statement and socket timeouts allow a request.
      new Migrator(migrationConnections()).migrate();
    } catch (SQLException e) {
      throw new IllegalStateException("could not migrate the database: " + e.getMessage(), e);
    }
    try (Connection c = pool.getConnection()) {
      durability = Durability.read(c);
      // The ceiling a start through SQL (not this server's routes) applies; several servers
      // configured apart: the last one started wins.
      try (PreparedStatement put =
          c.prepareStatement("SELECT queue.setting_put('max_retention_days', ?)")) {
        put.setString(1, Integer.toString(config.maxRetentionDays()));
        put.execute();
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "could not read the database's settings: " + e.getMessage(), e);
    }
    return pool;
  }

  /** Connections for the migrator: the database's, without the pool's timeouts. */
  private PGSimpleDataSource migrationConnections() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(connectionInfo.jdbcUrl());
    connectionInfo.user().ifPresent(ds::setUser);
    connectionInfo.password().ifPresent(ds::setPassword);
    ds.setApplicationName("pgworkflows-migrator");
    ds.setConnectTimeout(5);
    ds.setLoginTimeout(10);
    return ds;
  }

  /** Every route as "METHOD /path/{param}", for checking the server against openapi.yaml. */
  public List<String> routes() {
    return app.unsafe.internalRouter.allHttpHandlers().stream()
        .map(e -> e.endpoint)
        .filter(e -> e.method.isHttpMethod())
        .map(e -> e.method.name() + " " + e.path)
        .sorted()
        .toList();
  }

  public int port() {
    return app.port();
  }

  /** Where the server's database is (useful when it started an embedded one). */
  public String jdbcUrl() {
    return connectionInfo.jdbcUrl();
  }

  /**
   * A connection of its own to the server's database, with the server's credentials (for an
   * embedded database, its superuser and password). The caller closes it.
   */
  public Connection connectToDatabase() throws SQLException {
    return connectionInfo.connect("pgworkflows");
  }

  /**
   * Stops in this order: every task stream ends and every waiting poll answers (nothing), as they
   * would at the end of their time; the HTTP server takes no new requests and lets those in flight
   * finish (up to a few seconds); the background work stops; the LISTEN connection and the pool
   * close; an embedded PostgreSQL stops; the server's own OpenTelemetry SDK closes last, exporting
   * the spans it still holds (those of the last requests). Once only: a second call (another
   * shutdown hook) waits for the first.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (stopAtExit != null && Thread.currentThread() != stopAtExit) {
      try {
        Runtime.getRuntime().removeShutdownHook(stopAtExit);
      } catch (IllegalStateException e) {
        // The JVM is exiting: the hook runs anyway, and finds the server closed.
      }
    }
    if (app != null) {
      log.info(
          "stopping: task streams and waiting polls answer now, requests in flight finish, then"
              + " the database connections close");
    }
    if (streams != null) {
      // Before the waits end: a stream whose turn ended would begin another.
      streams.endAll();
    }
    if (longPoll != null) {
      longPoll.endWaits();
    }
    if (streamFollowers != null) {
      // Readers following streams end their answers; their clients resume on another server.
      streamFollowers.close();
    }
    if (app != null) {
      app.stop();
    }
    for (int i = closeables.size() - 1; i >= 0; i--) {
      try {
        closeables.get(i).close();
      } catch (Exception e) {
        log.warn("error while stopping: {}", e.getMessage());
      }
    }
  }

  /** How the workers listing names this server: its host name and port. */
  private static String serverId(int port) {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "localhost";
    }
    return host + ":" + port;
  }

  private static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
