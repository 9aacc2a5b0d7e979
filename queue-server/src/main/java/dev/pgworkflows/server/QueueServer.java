package dev.pgworkflows.server;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.engine.internal.db.ConnectionInfo;
import dev.pgworkflows.engine.internal.db.Durability;
import dev.pgworkflows.engine.internal.host.EngineCore;
import dev.pgworkflows.engine.internal.maintenance.HttpDelivery;
import dev.pgworkflows.engine.internal.maintenance.WebhookTargets;
import dev.pgworkflows.engine.internal.runtime.LongPoll;
import dev.pgworkflows.engine.internal.runtime.StreamFollowers;
import dev.pgworkflows.engine.internal.runtime.TaskStreams;
import dev.pgworkflows.engine.internal.runtime.Wakeups;
import dev.pgworkflows.engine.internal.runtime.WorkflowEvents;
import dev.pgworkflows.engine.internal.store.AuditStore;
import dev.pgworkflows.engine.internal.store.Sql;
import dev.pgworkflows.server.internal.audit.AuditTrail;
import dev.pgworkflows.server.internal.db.ServerDatabase;
import dev.pgworkflows.server.internal.http.Auth;
import dev.pgworkflows.server.internal.http.Exposure;
import dev.pgworkflows.server.internal.http.OperatorAudit;
import dev.pgworkflows.server.internal.http.RouteScopes;
import dev.pgworkflows.server.internal.http.ServerRoutes;
import dev.pgworkflows.server.internal.http.WebServer;
import dev.pgworkflows.server.internal.telemetry.Metrics;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.Javalin;
import io.javalin.config.RoutesConfig;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
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
    streams =
        new TaskStreams(
            core.tasks(),
            longPoll,
            core.timers(),
            clock,
            core.scheduler(),
            config.maxTaskStreams());
    List<Consumer<RoutesConfig>> routes =
        ServerRoutes.of(
            core,
            new ServerRoutes.Parts(
                sql,
                streams,
                followers,
                metrics,
                tracing,
                auditStore,
                webhookTargets,
                clock,
                config.workerExpiryMs()));
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
    ServerDatabase db =
        ServerDatabase.open(
            new ServerDatabase.Settings(
                config.databaseUrl(),
                config.databaseUser(),
                config.databasePassword(),
                config.dataDir(),
                config.embeddedPostgresPort(),
                config.poolSize(),
                config.dbStatementTimeoutMs(),
                config.dbSocketTimeoutMs(),
                config.maxRetentionDays()),
            closeables);
    if (db.embedded()) {
      // As zonky's own hook did (it is off, see EmbeddedDatabase), but in order: a server never
      // closed (a test that forgets to) still stops its PostgreSQL as the JVM exits.
      stopAtExit = new Thread(this::close, "pgworkflows-stop");
      Runtime.getRuntime().addShutdownHook(stopAtExit);
    }
    connectionInfo = db.connection();
    durability = db.durability();
    return db.pool();
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
