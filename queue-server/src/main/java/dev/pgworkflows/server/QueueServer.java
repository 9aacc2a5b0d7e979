package dev.pgworkflows.server;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.server.internal.db.ConnectionInfo;
import dev.pgworkflows.server.internal.db.EmbeddedDatabase;
import dev.pgworkflows.server.internal.db.Pool;
import dev.pgworkflows.server.internal.db.Sql;
import dev.pgworkflows.server.internal.http.Auth;
import dev.pgworkflows.server.internal.http.HealthRoutes;
import dev.pgworkflows.server.internal.http.IdleConnections;
import dev.pgworkflows.server.internal.http.JettyProblems;
import dev.pgworkflows.server.internal.http.Problems;
import dev.pgworkflows.server.internal.http.RequestHooks;
import dev.pgworkflows.server.internal.http.RequestIds;
import dev.pgworkflows.server.internal.http.RouteTemplates;
import dev.pgworkflows.server.internal.metrics.Metrics;
import dev.pgworkflows.server.internal.queue.MessageRoutes;
import dev.pgworkflows.server.internal.queue.QueueRoutes;
import dev.pgworkflows.server.internal.queue.QueueStore;
import dev.pgworkflows.server.internal.topic.HttpDelivery;
import dev.pgworkflows.server.internal.topic.TopicRoutes;
import dev.pgworkflows.server.internal.topic.TopicStore;
import dev.pgworkflows.server.internal.tracing.Tracing;
import dev.pgworkflows.server.internal.wait.LongPoll;
import dev.pgworkflows.server.internal.wait.Timers;
import dev.pgworkflows.server.internal.wait.Waiters;
import dev.pgworkflows.server.internal.wait.Wakeups;
import dev.pgworkflows.server.internal.workflow.HandedStarts;
import dev.pgworkflows.server.internal.workflow.WorkerRoutes;
import dev.pgworkflows.server.internal.workflow.WorkflowEvents;
import dev.pgworkflows.server.internal.workflow.WorkflowRoutes;
import dev.pgworkflows.server.internal.workflow.WorkflowStore;
import dev.pgworkflows.sql.Migrator;
import dev.pgworkflows.sweeper.Sweeper;
import dev.pgworkflows.sweeper.SweeperConfig;
import io.javalin.Javalin;
import io.opentelemetry.api.OpenTelemetry;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server process: database (given or embedded), migrations, the REST API, the LISTEN connection
 * with the long-poll registry, and background workers. Stateless apart from waiters: any number of
 * servers may share one database.
 */
public final class QueueServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(QueueServer.class);

  /** Header-field cache per connection, in trie nodes (see where it is set). */
  private static final int HEADER_CACHE = 256;

  /** Javalin's buffer for copying a result into the response, in bytes (see where it is set). */
  private static final int RESPONSE_COPY_BUFFER = 4096;

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private Javalin app;
  private Wakeups wakeups;
  private WorkerRoutes workerRoutes;
  private ConnectionInfo connectionInfo;

  private QueueServer() {}

  /** Starts a server; throws when the database cannot be reached or migrated. */
  public static QueueServer start(ServerConfig config) {
    return start(config, Tracing.fromEnvironment(System.getenv()));
  }

  /** Starts a server that traces with the given OpenTelemetry (tests pass an in-memory one). */
  public static QueueServer start(ServerConfig config, OpenTelemetry otel) {
    QueueServer s = new QueueServer();
    try {
      s.boot(config, otel);
      return s;
    } catch (RuntimeException e) {
      s.close();
      throw e;
    }
  }

  private void boot(ServerConfig config, OpenTelemetry otel) {
    Tracing tracing = new Tracing(otel);
    if (config.databaseUrl().isPresent()) {
      connectionInfo =
          ConnectionInfo.parse(
              config.databaseUrl().get(), config.databaseUser(), config.databasePassword());
    } else {
      EmbeddedDatabase embedded =
          EmbeddedDatabase.start(config.dataDir(), config.embeddedPostgresPort());
      closeables.add(embedded);
      connectionInfo =
          new ConnectionInfo(
              embedded.jdbcUrl(),
              java.util.Optional.of("postgres"),
              java.util.Optional.of("postgres"));
    }
    HikariDataSource pool = Pool.open(connectionInfo, config.poolSize());
    closeables.add(pool);
    try {
      new Migrator(pool).migrate();
    } catch (SQLException e) {
      throw new IllegalStateException("could not migrate the database: " + e.getMessage(), e);
    }
    Sql sql = new Sql(pool);

    ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2, daemon("scheduler"));
    ExecutorService io =
        Executors.newFixedThreadPool(Math.max(4, config.poolSize()), daemon("poll-io"));
    closeables.add(io::shutdownNow);
    closeables.add(scheduler::shutdownNow);

    QueueStore queues = new QueueStore(sql);
    Waiters waiters = new Waiters();
    Timers timers = new Timers(scheduler, waiters::wakeOne);
    LongPoll longPoll = new LongPoll(waiters, timers, io, scheduler, queues::nextVisibleAt);
    HttpDelivery delivery =
        new HttpDelivery(
            sql,
            new HttpDelivery.Settings(
                config.deliveryMaxAttempts(),
                Duration.ofMillis(config.deliveryTimeoutMs()),
                Duration.ofMillis(config.deliveryBackoffMs())),
            scheduler);
    closeables.add(delivery);

    wakeups =
        new Wakeups(
            connectionInfo,
            queue -> {
              if (queue.equals("#outbox")) {
                delivery.nudge();
              } else {
                waiters.wakeOne(queue);
              }
            },
            () -> waiters.queuesWaitedOn().forEach(waiters::wakeOne));
    closeables.add(wakeups);
    wakeups.start();
    // A lost notification costs at most one fallback interval.
    scheduler.scheduleWithFixedDelay(
        () -> waiters.queuesWaitedOn().forEach(waiters::wakeOne),
        config.fallbackPollMs(),
        config.fallbackPollMs(),
        TimeUnit.MILLISECONDS);

    Auth auth = new Auth(config.apiTokens());
    if (auth.presenceOnly()) {
      log.warn(
          "WORKFLOWS_API_TOKENS is not set: any bearer token is accepted (presence-only mode);"
              + " put the server behind a trusted proxy or set tokens");
    }
    HealthRoutes health = new HealthRoutes(sql, wakeups::connected);
    QueueRoutes queueRoutes = new QueueRoutes(queues);
    MessageRoutes messageRoutes = new MessageRoutes(queues, longPoll, timers);
    TopicRoutes topicRoutes = new TopicRoutes(new TopicStore(sql), delivery::nudge);
    WorkflowStore workflows = new WorkflowStore(sql, config.maxRetentionDays());
    Metrics metrics = new Metrics(sql, pool, waiters::waiting);
    WorkflowEvents events = metrics;
    Sweeper sweeper =
        new Sweeper(
            pool,
            SweeperConfig.defaults().withInterval(Duration.ofMillis(config.sweeperIntervalMs())),
            metrics);
    closeables.add(sweeper);
    WorkflowRoutes workflowRoutes =
        new WorkflowRoutes(workflows, new HandedStarts(workflows, longPoll), events, tracing);
    WorkerRoutes workerRoutes = new WorkerRoutes(workflows, longPoll, timers, events, tracing);
    this.workerRoutes = workerRoutes;

    app =
        Javalin.create(
            cfg -> {
              cfg.startup.showJavalinBanner = false;
              cfg.http.maxRequestSize = config.maxBodyBytes();
              cfg.http.asyncTimeout = 45_000;
              // Javalin copies every result into the response through a buffer of this size, new
              // for each response: Jetty's output buffer size (32 KiB) unless set. The answers of
              // the worker protocol are a few hundred bytes, and at a moderate load that buffer
              // was a quarter of all the bytes a server, two workers and a load generator in one
              // JVM allocated. Bodies over it are copied in more pieces, and it stays over the
              // size from which Javalin compresses (1,500 bytes), so what is compressed does not
              // change.
              cfg.http.responseBufferSize = RESPONSE_COPY_BUFFER;
              cfg.jetty.port = config.port();
              cfg.jetty.modifyServer(
                  server -> {
                    server.setErrorHandler(new JettyProblems());
                    IdleConnections.outlast(server, LongPoll.MAX_WAIT);
                  });
              // Jetty keeps a cache of header fields per connection, sized in trie nodes of 96
              // bytes: 1,024 by default, 96 KiB for every open connection once it has served a
              // request, and a long-poll client holds its connection open. 1,000 waiting polls
              // held 96 MiB of it; a worker's repeated headers fit in a quarter of that.
              cfg.jetty.modifyHttpConfiguration(http -> http.setHeaderCacheSize(HEADER_CACHE));
              Problems.install(cfg);
              RouteTemplates templates = new RouteTemplates(() -> app);
              RequestHooks hooks = new RequestHooks().before(RequestIds::assign);
              metrics.register(hooks, templates);
              tracing.register(hooks, templates);
              hooks.before(auth::check).after(ctx -> RequestIds.clear());
              hooks.install(cfg.routes);
              // Javalin tries a request's path against the routes of its method in the order they
              // were added: the worker protocol's and the runs' routes, the busiest, go first.
              workerRoutes.register(cfg.routes);
              workflowRoutes.register(cfg.routes);
              health.register(cfg.routes);
              metrics.register(cfg.routes);
              queueRoutes.register(cfg.routes);
              messageRoutes.register(cfg.routes);
              topicRoutes.register(cfg.routes);
            });
    app.start();
    delivery.start();
    sweeper.start(scheduler);
    log.info("pgworkflows server listening on port {}", app.port());
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

  @Override
  public void close() {
    if (workerRoutes != null) {
      workerRoutes.endStreams();
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

  private static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
